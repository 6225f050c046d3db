import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, type Compilable, type CompiledQuery, type RawBuilder, type SqlBool } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import { silentLogger, type Logger } from '../../application/index.ts';
import { ConnectionLock, LockedSqliteDialect } from './connection-lock.ts';
import { GroupCommit, type GroupEndHook } from './group-commit.ts';
import { isCurrent, migrateToLatest } from './migrator.ts';

/** The stored schema, as Kysely sees it (column names are the SQL ones). */
export interface DB {
  sessions: SessionsTable;
  turn_transcripts: TurnTranscriptsTable;
  tasks: TasksTable;
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

/** Named values for a statement prepared with {@link param} placeholders. */
export type Params = Readonly<Record<string, unknown>>;

/** A statement compiled and prepared once, run many times with named parameters. */
export interface Statement<R> {
  all(params?: Params): R[];
  get(params?: Params): R | undefined;
  /** Runs a write; returns the number of rows changed. */
  run(params?: Params): number;
}

const PARAM_PREFIX = '\u0000param:';

/**
 * A named placeholder for {@link SqliteDatabase.prepare}. Queries stay written with Kysely's
 * builder (so the PostgreSQL dialect can compile the same code) while the hot path skips
 * building, compiling and preparing SQL on every call.
 */
export function param<T>(name: string): T {
  return (PARAM_PREFIX + name) as unknown as T;
}

/**
 * Keyset paging, newest first: the rows that come after `after` in (updated_at desc, id desc)
 * order, for a query over one table that has both columns. Written out rather than as a row value
 * so every engine turns it into an index range.
 */
export function olderThan(after: { updatedAt: string; id: string }): RawBuilder<SqlBool> {
  return sql<SqlBool>`updated_at <= ${after.updatedAt} and (updated_at < ${after.updatedAt} or id < ${after.id})`;
}

/** Prepared statements of queries compiled per call (a small, fixed set of SQL shapes). */
const STATEMENT_CACHE_SIZE = 64;
/** How often a long-running process refreshes the planner's statistics. */
const OPTIMIZE_EVERY_MS = 60 * 60 * 1000;

/** An open SQLite database: the raw better-sqlite3 handle, Kysely over it, and statement helpers. */
export class SqliteDatabase {
  private readonly cache = new Map<string, BetterSqlite3.Statement>();
  private closed = false;
  private readonly optimizer: NodeJS.Timeout;
  private readonly writes: GroupCommit;

  /** The database file, or `:memory:`. */
  readonly file: string;
  readonly sqlite: BetterSqlite3.Database;
  readonly kysely: Kysely<DB>;
  /** The lock Kysely's dialect takes too ({@link LockedSqliteDialect}); without it raw work borrows Kysely's connection. */
  private readonly lock?: ConnectionLock | undefined;
  /** Turns storage failures into UNAVAILABLE errors, logged once each. */
  readonly failures: StorageFailures;

  constructor(
    file: string,
    sqlite: BetterSqlite3.Database,
    kysely: Kysely<DB>,
    lock?: ConnectionLock,
    failures: StorageFailures = new StorageFailures(silentLogger),
  ) {
    this.file = file;
    this.sqlite = sqlite;
    this.kysely = kysely;
    this.lock = lock;
    this.failures = failures;
    // Without statistics SQLite picks a poor index for ListTasks with several filters (measured:
    // 250 ms instead of 0.7 ms at 1M tasks). `optimize` re-analyses only tables that changed a lot;
    // SQLite recommends running it at open (0x10002) and periodically on long-lived connections.
    sqlite.pragma('analysis_limit = 1000');
    this.optimizer = setInterval(
      () => void this.exclusive(() => this.sqlite.pragma('optimize')).catch(() => {}),
      OPTIMIZE_EVERY_MS,
    );
    this.optimizer.unref();
    this.writes = new GroupCommit(
      sqlite,
      (fn) => this.exclusive(fn),
      (err) => this.failures.map(err),
    );
  }

  /** Compiles a query built with {@link param} placeholders once; every bound value must be a placeholder. */
  prepare<R>(query: Compilable<R>): Statement<R> {
    const compiled = query.compile();
    const names = compiled.parameters.map((p) => {
      if (typeof p !== 'string' || !p.startsWith(PARAM_PREFIX)) {
        throw new Error(`prepared query binds a literal value (use param()): ${compiled.sql}`);
      }
      return p.slice(PARAM_PREFIX.length);
    });
    const stmt = this.sqlite.prepare(compiled.sql);
    const bind = (params: Params = {}): unknown[] =>
      names.map((n) => {
        const v = params[n];
        if (v === undefined) throw new Error(`missing value for parameter ${n} of: ${compiled.sql}`);
        return v;
      });
    return {
      all: (params) => stmt.all(bind(params)) as R[],
      get: (params) => stmt.get(bind(params)) as R | undefined,
      run: (params) => stmt.run(bind(params)).changes,
    };
  }

  /** Runs a query compiled at call time (e.g. with optional filters), reusing its prepared statement. */
  all<R>(compiled: CompiledQuery<R>): R[] {
    return this.statement(compiled.sql).all(compiled.parameters) as R[];
  }

  /**
   * Runs `fn` (synchronous better-sqlite3 work) while holding the connection Kysely also uses.
   * Raw statements executed while some Kysely transaction sits between two awaits would silently
   * join that transaction (and vanish with its rollback); taking the same lock keeps them apart.
   * When the lock is free, `fn` runs at once.
   */
  exclusive<T>(fn: () => T): Promise<T> {
    const lock = this.lock;
    const fail = (err: unknown): Promise<never> => Promise.reject(this.failures.map(err));
    if (!lock)
      return this.kysely
        .connection()
        .execute(() => new Promise<T>((done) => done(fn())))
        .catch(fail);
    if (lock.tryAcquire()) {
      // Free: run now, without a round trip through the event loop.
      try {
        return Promise.resolve(fn());
      } catch (err) {
        return fail(err);
      } finally {
        lock.release();
      }
    }
    return lock
      .acquire()
      .then(() => {
        try {
          return fn();
        } finally {
          lock.release();
        }
      })
      .catch(fail);
  }

  /**
   * Runs `fn` (synchronous better-sqlite3 writes) in the next group commit and resolves once that
   * commit is durable (to the WAL), so callers keep "stored before acknowledged". Writes issued in
   * the same turn of the event loop (concurrent requests, other tasks) share one IMMEDIATE
   * transaction instead of paying a commit each. `fn` must be atomic on its own — one statement
   * (SQLite undoes a failed statement alone) or a better-sqlite3 transaction function (nested, it
   * runs as a savepoint) — so one that throws (e.g. a constraint) is rejected alone.
   */
  write<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the database is closed'));
    return this.writes.add(fn);
  }

  /** From inside a {@link write}: `hook` runs after the group's last write, in its transaction. */
  atGroupEnd(hook: GroupEndHook): void {
    this.writes.atGroupEnd(hook);
  }

  /** Closes the database; safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Writes already accepted are committed before the handle goes.
    await this.writes.drain();
    this.closed = true;
    clearInterval(this.optimizer);
    this.cache.clear();
    try {
      // SQLite recommends this before closing long-lived connections: it refreshes planner statistics.
      if (this.sqlite.open) optimize(this.sqlite, 'optimize');
    } finally {
      await this.kysely.destroy();
      // Kysely closes the handle only if it ever connected.
      if (this.sqlite.open) this.sqlite.close();
    }
  }

  private statement(sql: string): BetterSqlite3.Statement {
    let stmt = this.cache.get(sql);
    if (stmt) {
      // Refresh its position so the eviction below drops the least recently used shape.
      this.cache.delete(sql);
    } else {
      stmt = this.sqlite.prepare(sql);
      if (this.cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
    }
    this.cache.set(sql, stmt);
    return stmt;
  }
}

export interface OpenDatabaseOptions {
  /** Path of the database file (its directory is created, mode 0700), or `:memory:`. */
  file: string;
  /** Where storage failures are logged (once each, with the correlation id callers get). */
  logger?: Logger | undefined;
  /** How long a write waits for another process's lock before failing (default 5 s). */
  busyTimeoutMs?: number | undefined;
}

/** Opens (creating if needed) the database, sets the pragmas and brings the schema up to date. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<SqliteDatabase> {
  const inMemory = opts.file === ':memory:' || opts.file === '';
  if (!inMemory) prepareFile(opts.file);
  const sqlite = new BetterSqlite3(opts.file);
  try {
    sqlite.pragma('journal_mode = WAL');
    // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
    const lock = new ConnectionLock();
    const failures = new StorageFailures(opts.logger ?? silentLogger);
    const kysely = new Kysely<DB>({
      dialect: new LockedSqliteDialect({ database: sqlite }, lock, (err) => failures.map(err)),
    });
    const db = new SqliteDatabase(opts.file, sqlite, kysely, lock, failures);
    try {
      await migrate(db);
      optimize(sqlite, 'optimize = 0x10002');
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  } catch (err) {
    if (sqlite.open) sqlite.close();
    throw err;
  }
}

/**
 * Kysely runs SQLite migrations without a transaction and without a lock (it assumes one
 * connection). SQLite DDL is transactional, so one IMMEDIATE transaction around the whole run makes
 * it atomic and makes a second process opening the same file wait, then find nothing to do.
 */
async function migrate(db: SqliteDatabase): Promise<void> {
  // A database this code already migrated (every start but the first) needs neither the write lock
  // nor the migrator's queries: one read says so.
  if (isCurrent(appliedMigrations(db.sqlite))) return;
  db.sqlite.exec('BEGIN IMMEDIATE');
  try {
    await migrateToLatest(db.kysely);
    db.sqlite.exec('COMMIT');
  } catch (err) {
    if (db.sqlite.inTransaction) db.sqlite.exec('ROLLBACK');
    throw err;
  }
}

/**
 * Refreshes planner statistics, which may need the write lock: when another connection holds it
 * (SQLITE_BUSY) the refresh is skipped — the statistics are a hint, and the periodic run retries.
 */
function optimize(sqlite: BetterSqlite3.Database, pragma: string): void {
  try {
    sqlite.pragma(pragma);
  } catch (err) {
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
  }
}

/** The names in Kysely's migration table; none when the table is not there yet (a new file). */
function appliedMigrations(sqlite: BetterSqlite3.Database): string[] {
  const table = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").get();
  if (table === undefined) return [];
  return (sqlite.prepare('SELECT name FROM kysely_migration').all() as { name: string }[]).map((r) => r.name);
}

/** The database holds credentials (push configs): its directory is private and the file is 0600. */
function prepareFile(file: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  // Creating the file ourselves sets its mode before SQLite writes anything; SQLite gives the
  // -wal and -shm files the same mode as the database file.
  fs.closeSync(fs.openSync(file, 'a', 0o600));
}

/**
 * `YYYY-MM-DDTHH:mm:ss.sssZ` with in-range fields and a day up to 28: such a string is a real
 * instant that toISOString() gives back unchanged. (Checked by hand: a regex was a visible cost at
 * nine timestamps per SendMessage.)
 */
function isCanonicalInstant(v: string): boolean {
  if (v.length !== 24 || v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || v.charCodeAt(10) !== 84) return false;
  if (v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58 || v.charCodeAt(19) !== 46 || v.charCodeAt(23) !== 90)
    return false;
  for (const i of DIGITS) {
    const c = v.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  const two = (i: number): number => (v.charCodeAt(i) - 48) * 10 + (v.charCodeAt(i + 1) - 48);
  const month = two(5);
  const day = two(8);
  return month >= 1 && month <= 12 && day >= 1 && day <= 28 && two(11) <= 23 && two(14) <= 59 && two(17) <= 59;
}
const DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];

/**
 * A timestamp in the one form the tables store (`toISOString()`: fixed width, UTC, milliseconds),
 * so that comparing strings compares instants.
 */
export function toIsoInstant(value: string, what: string): string {
  // Already in that form (what toISOString() wrote, as nearly every stored timestamp is).
  if (isCanonicalInstant(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new AppError('INVALID_PARAMS', `${what} is not a valid timestamp: ${JSON.stringify(value)}`, {
      fields: [{ field: what, description: 'must be an ISO 8601 timestamp such as 2026-01-31T12:00:00.000Z' }],
    });
  }
  return new Date(ms).toISOString();
}

/** True for a SQLite constraint violation of the given kind (`PRIMARYKEY`, `FOREIGNKEY`, `UNIQUE`, …). */
export function isConstraintError(err: unknown, kind: string): boolean {
  return err instanceof BetterSqlite3.SqliteError && err.code === `SQLITE_CONSTRAINT_${kind}`;
}

/** SQLite result codes that mean the storage failed (not the statement), with what to tell a caller. */
const STORAGE_PROBLEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^SQLITE_(BUSY|LOCKED)/, 'the database is locked by another process'],
  [/^SQLITE_READONLY/, 'the database is read-only'],
  [/^SQLITE_FULL/, 'the disk is full'],
  [/^SQLITE_(CORRUPT|NOTADB)/, 'the database file is damaged'],
  [/^SQLITE_(IOERR|CANTOPEN|PERM|PROTOCOL|NOLFS)/, 'the database cannot be read or written'],
];

/**
 * Storage failures (locked, read-only, full, damaged, I/O) become one UNAVAILABLE error each,
 * logged here once with a correlation id that every caller it fails sees in `error.data`; the
 * SQLite text (which may name tables or statements) stays in the log. Other errors pass through.
 */
export class StorageFailures {
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  map(err: unknown): unknown {
    if (err instanceof AppError || !(err instanceof BetterSqlite3.SqliteError)) return err;
    const problem = STORAGE_PROBLEMS.find(([re]) => re.test(err.code))?.[1];
    if (!problem) return err;
    const correlationId = randomUUID();
    this.logger.error({ err, code: err.code, correlationId }, `storage failed: ${problem}`);
    return new AppError('UNAVAILABLE', `Storage is unavailable: ${problem}; nothing was changed by this request`, {
      details: { correlationId },
      hint: `retry once the storage problem is fixed; the server log has the cause under correlation id ${correlationId}`,
      cause: err,
    });
  }
}
