import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, type Compilable, type CompiledQuery, type RawBuilder, type SqlBool } from 'kysely';
import { silentLogger, type Logger } from '../../application/index.ts';
import { ConnectionLock, LockedSqliteDialect } from './connection-lock.ts';
import { GroupCommit, type GroupEndHook } from './group-commit.ts';
import { isCurrent, migrateToLatest } from './migrator.ts';
import type { DB } from './database-schema.ts';
import { StorageFailures } from './storage-failures.ts';

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
