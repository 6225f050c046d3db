import type {
  AccountRepository,
  AuditLog,
  DiagnosticCheck,
  GrantRepository,
  NamespaceLimitsRepository,
  Logger,
  NamespaceRepository,
  PlanRepository,
  PushConfigRepository,
  PushOutbox,
  PushScheduler,
  RegistryRepository,
  RunnerRegistry,
  SecretStore,
  SessionRepository,
  SyncStateStore,
  TaskRepository,
  TranscriptStore,
  TurnChangeRepository,
  UsageCounter,
  UsageLedger,
} from '../../application/index.ts';

/** A runner registry whose lease this process holds (SQLite or PostgreSQL `runners` table). */
export interface LeasedRunnerRegistry extends RunnerRegistry {
  /** How often stranded work is looked for, so that a dead runner's turns are settled within the lease. */
  readonly sweepEveryMs: number;
  /** Takes the lease and renews it until stop(). */
  start(): Promise<void>;
  /** Gives the lease up (what this process still runs is then anyone's to settle). */
  stop(): Promise<void>;
  /** Deletes the rows of dead runners (their work is settled first). */
  prune(): Promise<number>;
  /** How many runners hold a live lease now (judged as {@link RunnerRegistry.isLive} does). */
  liveCount(): Promise<number>;
}

/**
 * Every store of the platform on one engine: the embedded SQLite file (the default) or a shared
 * PostgreSQL database (server mode, one or more instances). The composition root opens one and
 * hands its parts to the services; nothing above this layer knows which engine it is.
 */
export interface Storage {
  readonly engine: 'sqlite' | 'postgresql';
  /** Where the data lives, for logs and diagnostics (a file path, or the URL without its password). */
  readonly location: string;
  tasks: TaskRepository;
  sessions: SessionRepository;
  pushConfigs: PushConfigRepository;
  pushOutbox: PushOutbox;
  registry: RegistryRepository;
  namespaces: NamespaceRepository;
  /** Capabilities granted to namespaces (server mode). */
  grants: GrantRepository;
  plans: PlanRepository;
  transcripts: TranscriptStore;
  audit: AuditLog;
  syncState: SyncStateStore;
  /** What chat turns changed in their projects' files (the undo history's records). */
  turnChanges: TurnChangeRepository;
  accounts: AccountRepository;
  /** Per-user limits: usage (running turns from the task rows, the ledger of model tokens), and namespaces' overrides. */
  quota: UsageCounter & UsageLedger & NamespaceLimitsRepository;
  /** Namespaces' secrets, sealed (the cipher holding the key is not storage's). */
  secrets: SecretStore;
  runners: LeasedRunnerRegistry;
  /** When push deliveries are drained (PostgreSQL: a shared queue; absent: in this process). */
  pushScheduler?: PushScheduler | undefined;
  /** A quick liveness probe; throws when storage is unusable. */
  ping(): Promise<void>;
  /** The storage part of `agents diagnostics`: engine, version, migrations, integrity, pool. */
  checks(): Promise<DiagnosticCheck[]>;
  close(): Promise<void>;
}

export interface StorageOptions {
  logger: Logger;
  /** This process's runner id (its lease). */
  runnerId: string;
  /** How long a runner lease lasts without renewal. */
  leaseMs?: number | undefined;
}
