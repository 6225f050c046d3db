import { createHash, randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { AppError } from '../../../domain/errors.ts';
import { silentLogger, type Logger } from '../../../application/index.ts';
import type { DB } from '../database-schema.ts';
import { migrateToLatest } from '../migrator.ts';
import { redactUrl } from './pg-url.ts';

/*
 * PostgreSQL storage: the same schema (one migration list) and the same Kysely query builder as
 * SQLite, over a `pg` connection pool. Several server instances share one database: what one
 * writes, the others learn through LISTEN/NOTIFY (a wake-up only; the tables stay the source of
 * truth), and work held by an instance is held under a lease (runners table).
 */

// Counts and sums come back as strings (int8); every stored integer column of ours is int4, which
// `pg` returns as a number already. Parse int8 too: our counts never pass 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface OpenPgDatabaseOptions {
  /** `postgres://user:password@host:port/database` (or `postgresql://`; `?host=/socket/dir` for a unix socket). */
  url: string;
  logger?: Logger | undefined;
  /** Connections in the pool (default 10; CLEVERAGENTS_DATABASE_POOL). */
  poolSize?: number | undefined;
  /** How long a query may wait for a free connection before failing (default 10 s). */
  connectTimeoutMs?: number | undefined;
  /** Application name shown in pg_stat_activity (default "cleveragents"). */
  applicationName?: string | undefined;
  /** Prepare statements once per connection (default true; see {@link preparing}). */
  prepare?: boolean | undefined;
}

/** A handler of NOTIFY payloads on one channel. */
export type NotifyHandler = (payload: string) => void;

/** What `diagnostics` reports of the pool. */
export interface PoolStats {
  size: number;
  max: number;
  idle: number;
  waiting: number;
}

/** An open PostgreSQL database: Kysely over a pool, a listener connection, and failure mapping. */
export class PgDatabase {
  readonly engine = 'postgresql' as const;
  private closed = false;
  private listener: pg.Client | undefined;
  private listening: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<NotifyHandler>>();
  /** The channels the current listener connection has run LISTEN for. */
  private readonly live = new Set<string>();
  private reconnect: NodeJS.Timeout | undefined;

  /** The URL without its password (for logs and diagnostics). */
  readonly displayUrl: string;
  private readonly url: string;
  readonly pool: pg.Pool;
  readonly kysely: Kysely<DB>;
  readonly maxConnections: number;
  readonly failures: PgStorageFailures;
  private readonly logger: Logger;

  constructor(
    displayUrl: string,
    url: string,
    pool: pg.Pool,
    kysely: Kysely<DB>,
    maxConnections: number,
    failures: PgStorageFailures,
    logger: Logger,
  ) {
    this.displayUrl = displayUrl;
    this.url = url;
    this.pool = pool;
    this.kysely = kysely;
    this.maxConnections = maxConnections;
    this.failures = failures;
    this.logger = logger;
  }

  /** Runs `fn` in one transaction (READ COMMITTED); storage failures become UNAVAILABLE. */
  async transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    try {
      return await this.kysely.transaction().execute(fn);
    } catch (err) {
      throw this.failures.map(err);
    }
  }

  /** Runs `fn` against the pool; storage failures become UNAVAILABLE. */
  async run<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T> {
    try {
      return await fn(this.kysely);
    } catch (err) {
      throw this.failures.map(err);
    }
  }

  poolStats(): PoolStats {
    return {
      size: this.pool.totalCount,
      max: this.maxConnections,
      idle: this.pool.idleCount,
      waiting: this.pool.waitingCount,
    };
  }

  /**
   * Calls `handler` with the payload of every NOTIFY on `channel` (from any instance, this one
   * included) until the returned function is called. One dedicated connection listens for all
   * channels; when it drops it is opened again (handlers then get an empty payload: "look again",
   * since notifications sent meanwhile are lost).
   */
  async listen(channel: string, handler: NotifyHandler): Promise<() => Promise<void>> {
    assertChannel(channel);
    let set = this.handlers.get(channel);
    const first = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    if (first) {
      try {
        const client = await this.listenerClient();
        await client.query(`LISTEN ${channel}`);
        if (this.listener === client) this.live.add(channel);
      } catch (err) {
        // Nothing listens: forget the handler, so that a later call tries again.
        set.delete(handler);
        if (set.size === 0) this.handlers.delete(channel);
        throw err;
      }
    }
    return async () => {
      const s = this.handlers.get(channel);
      if (!s?.delete(handler) || s.size > 0) return;
      this.handlers.delete(channel);
      this.live.delete(channel);
      if (this.listener && !this.closed) await this.listener.query(`UNLISTEN ${channel}`).catch(() => {});
    };
  }

  /**
   * Whether notifications on `channel` reach this process now: its LISTEN ran on the listener
   * connection, which has not failed since. Synchronous: callers ask it on every request.
   */
  isListening(channel: string): boolean {
    return this.listener !== undefined && this.live.has(channel);
  }

  /** Sends a notification (delivered when the current transaction, if any, commits). */
  async notify(channel: string, payload: string, db: Kysely<DB> = this.kysely): Promise<void> {
    assertChannel(channel);
    await sql`select pg_notify(${channel}, ${payload})`.execute(db);
  }

  /** The server's version string, e.g. "PostgreSQL 15.18". */
  async serverVersion(): Promise<string> {
    const r = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(this.kysely);
    return `PostgreSQL ${r.rows[0]?.v ?? '?'}`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnect);
    this.handlers.clear();
    this.live.clear();
    const listener = this.listener;
    this.listener = undefined;
    if (listener) await listener.end().catch(() => {});
    await this.kysely.destroy();
  }

  private listenerClient(): Promise<pg.Client> {
    if (this.listener) return Promise.resolve(this.listener);
    return (this.listening ??= (async () => {
      const client = new pg.Client({ connectionString: this.url, application_name: 'cleveragents-listen' });
      client.on('notification', (msg) => {
        for (const h of [...(this.handlers.get(msg.channel) ?? [])]) {
          try {
            h(msg.payload ?? '');
          } catch (err) {
            this.logger.error({ err, channel: msg.channel }, 'a notification handler failed');
          }
        }
      });
      client.on('error', (err) => {
        this.logger.warn({ err: err.message }, 'the PostgreSQL listener connection failed; reconnecting');
        if (this.listener === client) {
          this.listener = undefined;
          this.live.clear();
        }
        void client.end().catch(() => {});
        this.scheduleRelisten();
      });
      try {
        await client.connect();
      } catch (err) {
        this.listening = undefined;
        throw this.failures.map(err);
      }
      this.listener = client;
      this.listening = undefined;
      return client;
    })());
  }

  private scheduleRelisten(): void {
    if (this.closed || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      if (this.closed) return;
      void (async () => {
        try {
          const client = await this.listenerClient();
          for (const channel of this.handlers.keys()) {
            await client.query(`LISTEN ${channel}`);
            if (this.listener === client) this.live.add(channel);
          }
          // Notifications sent while nobody listened are lost: every handler looks again.
          for (const set of this.handlers.values()) for (const h of set) h('');
        } catch {
          this.scheduleRelisten();
        }
      })();
    }, 500);
    this.reconnect.unref();
  }
}

/** Channel names are ours (never user input), but LISTEN cannot take a parameter: keep them plain. */
function assertChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`bad notification channel name: ${channel}`);
}

/** Opens the pool, checks the server answers, and brings the schema up to date (once across instances). */
export async function openPgDatabase(opts: OpenPgDatabaseOptions): Promise<PgDatabase> {
  const logger = opts.logger ?? silentLogger;
  const max = opts.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString: opts.url,
    max,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    application_name: opts.applicationName ?? 'cleveragents',
  });
  // An idle client's error (the server restarted) must not end the process: the pool drops it.
  pool.on('error', (err) => logger.warn({ err: err.message }, 'an idle PostgreSQL connection failed'));
  if (opts.prepare !== false) {
    const state = { on: true };
    pool.on('connect', (client) => preparing(client, state, logger));
  }
  const failures = new PgStorageFailures(logger);
  const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const db = new PgDatabase(redactUrl(opts.url), opts.url, pool, kysely, max, failures, logger);
  try {
    await sql`select 1`.execute(kysely);
    await migrate(kysely);
  } catch (err) {
    await db.close().catch(() => {});
    throw failures.map(err);
  }
  return db;
}

/** Statements prepared per connection at most: texts that vary (IN lists) stop being prepared past it. */
const MAX_PREPARED_PER_CONNECTION = 200;

/**
 * Makes a connection prepare each parameterised statement once (named by a hash of its text), so
 * PostgreSQL parses and plans a hot statement once per connection rather than at every call: the
 * event and create statements are large CTEs (issue #40, point 7: about +20% SendMessage/s,
 * measured in the bench's alternating runs). The plain fallback: past the bound per connection, a
 * statement goes unnamed; and a pooler in front that does not keep prepared statements (SQLSTATE
 * 26000, e.g. PgBouncer in transaction mode before 1.21) turns preparing off for the pool, the
 * statement sent again unnamed (it did not run).
 */
function preparing(client: pg.PoolClient, state: { on: boolean }, logger: Logger): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const names = new Set<string>();
  const wrapped = (text: unknown, values?: unknown, callback?: unknown): unknown => {
    if (!state.on || typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback)
      return query(text, values, callback);
    const name = `ca_${createHash('sha1').update(text).digest('base64url').slice(0, 24)}`;
    if (!names.has(name)) {
      if (names.size >= MAX_PREPARED_PER_CONNECTION) return query(text, values);
      names.add(name);
    }
    return query({ name, text, values }).catch((err: unknown) => {
      if ((err as { code?: unknown } | null)?.code !== '26000') throw err;
      if (state.on)
        logger.warn({ err }, 'prepared statements are not kept by the database connection; sending plain ones');
      state.on = false;
      return query(text, values);
    });
  };
  (client as { query: unknown }).query = wrapped;
}

/**
 * Kysely's migrator serialises concurrent runs through its lock table; an advisory lock around
 * the whole run also keeps a second instance from reading a half-migrated schema.
 */
async function migrate(kysely: Kysely<DB>): Promise<void> {
  await kysely.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(7263540011)`.execute(conn);
    try {
      await migrateToLatest(conn);
    } finally {
      await sql`select pg_advisory_unlock(7263540011)`.execute(conn);
    }
  });
}

/** True for a PostgreSQL constraint violation: `unique` (23505) or `foreign` (23503). */
export function isPgConstraintError(err: unknown, kind: 'unique' | 'foreign'): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === (kind === 'unique' ? '23505' : '23503');
}

/**
 * SQLSTATE classes and socket errors that mean the storage failed, not the statement, and whether
 * the statement is known not to have taken effect: refused before it ran (no connection, refused
 * credentials, no room) or rolled back with it. A connection lost while a statement was in flight
 * may have committed it first (issue #40, point 3: a client was told "nothing was changed" then).
 */
function pgProblem(err: unknown): { problem: string; notMade: boolean } | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const unreachable = 'the database server cannot be reached';
  if (typeof code !== 'string') {
    const msg = err instanceof Error ? err.message : '';
    if (/timeout exceeded when trying to connect/i.test(msg)) return { problem: unreachable, notMade: true };
    if (/Connection terminated/i.test(msg)) return { problem: unreachable, notMade: false };
    return undefined;
  }
  if (/^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENOENT)$/.test(code)) return { problem: unreachable, notMade: true };
  if (/^(ECONNRESET|ETIMEDOUT|EPIPE)$/.test(code)) return { problem: unreachable, notMade: false };
  // 08001/08004: no connection was made; the rest of class 08 may lose one mid-statement.
  if (code === '08001' || code === '08004')
    return { problem: 'the connection to the database server failed', notMade: true };
  if (code.startsWith('08')) return { problem: 'the connection to the database server failed', notMade: false };
  if (code === '57P03') return { problem: 'the database server is shutting down or starting', notMade: true };
  if (code === '57P01' || code === '57P02')
    return { problem: 'the database server is shutting down or starting', notMade: false };
  if (code === '53100') return { problem: 'the database server disk is full', notMade: true };
  if (code.startsWith('53')) return { problem: 'the database server is out of resources', notMade: true };
  if (code === '25006') return { problem: 'the database is read-only', notMade: true };
  if (code === '28P01' || code === '28000') return { problem: 'the database refused the credentials', notMade: true };
  if (code === '3D000') return { problem: 'the database does not exist', notMade: true };
  // ALTER DATABASE … ALLOW_CONNECTIONS false (maintenance): no connection was made.
  if (code === '55000' && /not currently accepting connections/i.test(err instanceof Error ? err.message : ''))
    return { problem: 'the database is not accepting connections', notMade: true };
  return undefined;
}

/** As StorageFailures for SQLite: one UNAVAILABLE error per failure, logged once with a correlation id. */
export class PgStorageFailures {
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  map(err: unknown): unknown {
    if (err instanceof AppError) return err;
    const found = pgProblem(err);
    if (!found) return err;
    const { problem, notMade } = found;
    const correlationId = randomUUID();
    this.logger.error({ err, correlationId }, `storage failed: ${problem}`);
    const outcome = notMade
      ? 'nothing was changed by this request'
      : 'the connection was lost during a write, which may or may not have been made';
    return new AppError('UNAVAILABLE', `Storage is unavailable: ${problem}; ${outcome}`, {
      details: { correlationId },
      hint: `retry once the storage problem is fixed; the server log has the cause under correlation id ${correlationId}`,
      cause: err,
    });
  }
}
