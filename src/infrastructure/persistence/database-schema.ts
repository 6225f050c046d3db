/** The stored schema, as Kysely sees it (column names are the SQL ones). */
export interface DB {
  sessions: SessionsTable;
  turn_transcripts: TurnTranscriptsTable;
  tasks: TasksTable;
  namespace_limits: NamespaceLimitsTable;
  model_usage: ModelUsageTable;
  task_events: TaskEventsTable;
  task_counts: TaskCountsTable;
  push_configs: PushConfigsTable;
  registry_entities: RegistryEntitiesTable;
  registry_refs: RegistryRefsTable;
  namespaces: NamespacesTable;
  namespace_members: NamespaceMembersTable;
  plans: PlansTable;
  plan_records: PlanRecordsTable;
  message_keys: MessageKeysTable;
  runners: RunnersTable;
  push_outbox: PushOutboxTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  sync_state: SyncStateTable;
  namespace_grants: NamespaceGrantsTable;
  namespace_secrets: NamespaceSecretsTable;
  turn_changes: TurnChangesTable;
}

/** What each chat turn changed in its project's files (migration 0014). */
export interface TurnChangesTable {
  task_id: string;
  session_id: string;
  root: string;
  before_snapshot: string;
  after_snapshot: string | null;
  /** JSON array of relative paths. */
  files: string;
  created_at: string;
  undone_at: string | null;
}

/** Capabilities a server administrator granted a namespace (migration 0013). */
export interface NamespaceGrantsTable {
  namespace: string;
  capability: string;
  /** JSON array of host directories (host-path), or null. */
  paths: string | null;
  granted_by: string;
  granted_at: string;
}

/** A namespace's secrets, encrypted with the server's key (migration 0013). */
export interface NamespaceSecretsTable {
  namespace: string;
  name: string;
  ciphertext: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/** Idempotency keys of follow-up messages (migration 0005; a task's first message is keyed on its row). */
export interface MessageKeysTable {
  owner: string;
  message_id: string;
  task_id: string;
  hash: string;
}

/** Lease rows of live agent processes (migration 0005). */
export interface RunnersTable {
  id: string;
  pid: number;
  host: string;
  started_at: string;
  heartbeat_at: string;
}

/** Push deliveries not yet acknowledged (migration 0006). */
export interface PushOutboxTable {
  task_id: string;
  config_id: string;
  seq: number;
  payload: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  runner_id: string | null;
  created_at: string;
}

export interface PlansTable {
  id: string;
  owner: string;
  action: string;
  phase: string;
  state: string;
  created_at: string;
  updated_at: string;
  doc: string;
}

export interface PlanRecordsTable {
  kind: string;
  id: string;
  plan_id: string;
  created_at: string;
  doc: string;
  /** A command's kept output (JSON of CommandOutput), apart from `doc`; null when none. */
  output: string | null;
}

export interface RegistryEntitiesTable {
  kind: string;
  name: string;
  namespace: string;
  type_field: string | null;
  revision: number;
  content_hash: string;
  created_at: string;
  updated_at: string;
  definition: string;
}

export interface RegistryRefsTable {
  from_kind: string;
  from_name: string;
  to_kind: string;
  to_name: string;
}

export interface NamespacesTable {
  name: string;
  owner: string;
  created_at: string;
}

export interface NamespaceMembersTable {
  namespace: string;
  principal: string;
  role: string;
  added_at: string;
}

/** Server-mode accounts (migration 0009); local mode has none (its one user is `local`). */
export interface UsersTable {
  name: string;
  display_name: string | null;
  /** 1: a server administrator. */
  admin: number;
  default_namespace: string;
  /** `issuer|subject` of a user the OIDC issuer vouches for; null for users made by an admin. */
  external_id: string | null;
  created_at: string;
  disabled_at: string | null;
}

/** API keys: a lookup id and a slow hash of the secret (migration 0009). */
export interface ApiKeysTable {
  id: string;
  user_name: string;
  name: string;
  hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** Security-relevant events (migration 0009). `id` is a ULID, so ids sort by time. */
export interface AuditEventsTable {
  id: string;
  at: string;
  event: string;
  principal: string | null;
  credential: string | null;
  namespace: string | null;
  target: string | null;
  outcome: string;
  /** JSON object, or null. */
  details: string | null;
  client: string | null;
}

/** What a local store last saw of each entity on the server it syncs with (migration 0009). */
export interface SyncStateTable {
  remote: string;
  kind: string;
  name: string;
  revision: number;
  content_hash: string;
  synced_at: string;
  /** Migration 0010. */
  local_hash: string;
}

export interface SessionsTable {
  id: string;
  owner: string;
  actor: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  task_count: number;
  project: string | null;
  /** JSON array of skill names, or null. */
  skills: string | null;
  /** JSON `{sessionId, taskId?}` of the session this one was forked from, or null (migration 0012). */
  forked_from: string | null;
  /** The chat context mode, 'map' or 'full', or null: map (migration 0015). */
  context: string | null;
}

export interface TurnTranscriptsTable {
  task_id: string;
  context_id: string;
  doc: string;
  updated_at: string;
}

export interface TasksTable {
  id: string;
  context_id: string;
  owner: string;
  state: string;
  created_at: string;
  /** The status timestamp, normalised to `toISOString()` form so strings sort as instants. */
  updated_at: string;
  /** Sequence number of the last event folded into `snapshot`. */
  seq: number;
  snapshot: string;
  /** The runner (process lease) running a turn of the task, null when none runs (migration 0005). */
  runner_id: string | null;
  /** The messageId that created the task and its content hash: the task's idempotency key (migration 0005). */
  message_id: string | null;
  message_hash: string | null;
  /**
   * The user who sent the message of the task's latest turn (its first, or a follow-up's sender):
   * per-user limits count running turns from it (migration 0017). Null when unknown.
   */
  started_by: string | null;
}

/** Model tokens a user used, one row per model step (per-user limits; migration 0018). */
export interface ModelUsageTable {
  user_id: string;
  /** When the step ended (ISO instant). */
  at: string;
  /** Input + output tokens of the step (PostgreSQL bigint: read back as a string). */
  tokens: number | string;
}

/** A namespace's overrides of the server's default per-user limits (migration 0017). */
export interface NamespaceLimitsTable {
  namespace: string;
  /** JSON: {requestsPerMinute?, concurrentTurns?, tokensPerDay?}. */
  limits: string;
  updated_at: string;
  updated_by: string;
}

/** How many tasks an owner has: in all (context_id '') and per context. Kept by the task repository. */
export interface TaskCountsTable {
  owner: string;
  context_id: string;
  n: number;
}

export interface TaskEventsTable {
  task_id: string;
  seq: number;
  kind: string;
  payload: string;
}

export interface PushConfigsTable {
  task_id: string;
  id: string;
  config: string;
}
