import { PgBoss, type Job } from 'pg-boss';
import pg from 'pg';
import type { Logger, OutboxTarget, PushDrain, PushScheduler } from '../../application/index.ts';

export interface PgBossPushSchedulerOptions {
  /** The shared PostgreSQL database (the same one the outbox is in). */
  url: string;
  logger: Logger;
  /** The pg-boss queue (default `cleveragents-push`). */
  queue?: string | undefined;
  /** The schema pg-boss keeps its tables in (default {@link PUSH_QUEUE_SCHEMA}). */
  schema?: string | undefined;
  /** Targets drained at once by this instance (default 4). */
  concurrency?: number | undefined;
  /** How long one job drains before it hands the rest to a new job (default 30 s). */
  runMs?: number | undefined;
  /** A job still active this long is taken for lost (its instance died) and retried elsewhere (default 120 s). */
  expireSeconds?: number | undefined;
  /** How often expired jobs are looked for (one instance does it per interval; default 30 s). */
  monitorIntervalSeconds?: number | undefined;
  /** How often an idle worker looks for a job (default 2 s; a wake in this instance looks at once). */
  pollingIntervalSeconds?: number | undefined;
  /** When another instance is draining the target: look again after this long (default 1 s). */
  busyRetryMs?: number | undefined;
  /** Shown in pg_stat_activity (default `cleveragents-push`). */
  applicationName?: string | undefined;
}

interface JobData {
  taskId: string;
  configId: string;
}

/** Advisory locks of push targets: (this class, hashtext(target)) — apart from every single-key lock. */
const LOCK_CLASS = 727_001;

/**
 * pg-boss's schema. Not pg-boss's default `pgboss`: there, CleverAgents before pg-boss 12 left a
 * pg-boss 10 schema (version 24), which no pg-boss release upgrades (11 rewrote the schema without
 * a migration from 24; 12 migrates from 25 on). The queue holds only wakes — the outbox is the
 * record — so a fresh schema loses nothing, and an instance of the previous version still running
 * beside a new one keeps its own queue while both take the same advisory locks.
 */
export const PUSH_QUEUE_SCHEMA = 'pgboss_push';

/** Where the previous versions kept the queue; see {@link PUSH_QUEUE_SCHEMA}. */
const RETIRED_SCHEMA = 'pgboss';

/**
 * Push deliveries across server instances, through a pg-boss queue in the shared database. A
 * wake is a job keyed by the target (queue policy `short`: at most one queued job per target, so
 * wakes coalesce); a worker on any instance takes it and drains the target, holding a PostgreSQL
 * advisory lock on it, so each delivery attempt happens in exactly one place at a time. What the
 * drain leaves (a retry's backoff, or its time being up) becomes a new job due then.
 *
 * Why `short` and a lock rather than a policy that limits active jobs (`stately`, `exclusive`): an
 * expired job's handler keeps running while the job is retried elsewhere, so the queue alone
 * cannot promise one drain at a time (and in pg-boss 10, a queued stately job whose key was active
 * made every fetch of the queue fail until that job ended). The lock is held on a connection of
 * this instance: when the instance dies, the server drops the connection and the lock with it;
 * its active job expires and is retried by another instance.
 */
export class PgBossPushScheduler implements PushScheduler {
  private drain: PushDrain | undefined;
  private readonly workers: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private starting: Promise<void> | undefined;
  private stopped = false;
  private fetching = true;

  private readonly boss: PgBoss;
  private readonly pool: pg.Pool;
  private readonly queue: string;
  private readonly logger: Logger;
  private readonly opts: {
    concurrency: number;
    runMs: number;
    busyRetryMs: number;
    pollingIntervalSeconds: number;
  };

  private constructor(
    boss: PgBoss,
    pool: pg.Pool,
    queue: string,
    logger: Logger,
    opts: {
      concurrency: number;
      runMs: number;
      busyRetryMs: number;
      pollingIntervalSeconds: number;
    },
  ) {
    this.boss = boss;
    this.pool = pool;
    this.queue = queue;
    this.logger = logger;
    this.opts = opts;
  }

  /** Connects, installs pg-boss's schema when missing (once across instances) and creates the queue. */
  static async open(opts: PgBossPushSchedulerOptions): Promise<PgBossPushScheduler> {
    const concurrency = opts.concurrency ?? 4;
    const logger = opts.logger;
    // Its own small pool: the queue's polling never waits behind the stores' queries, nor they behind it.
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: concurrency + 3,
      application_name: opts.applicationName ?? 'cleveragents-push',
      idleTimeoutMillis: 30_000,
    });
    pool.on('error', (err) => logger.warn({ err: err.message }, 'an idle push queue connection failed'));
    const schema = opts.schema ?? PUSH_QUEUE_SCHEMA;
    // Expiry runs in pg-boss's supervise pass (its timer) on each queue's monitor interval: both
    // are set, or a job of a dead instance would wait up to pg-boss's default minute to expire.
    const monitorIntervalSeconds = opts.monitorIntervalSeconds ?? 30;
    const boss = new PgBoss({
      db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) },
      schema,
      schedule: false,
      supervise: true,
      migrate: true,
      superviseIntervalSeconds: monitorIntervalSeconds,
      monitorIntervalSeconds,
    });
    boss.on('error', (err) => logger.warn({ err }, 'the push queue failed'));
    // Slow queries, a backlog, clock skew between instances, bloated indexes: for the operator.
    boss.on('warning', (w) => logger.warn({ ...w.data }, `the push queue warns: ${w.message}`));
    const queue = opts.queue ?? 'cleveragents-push';
    try {
      if (schema !== RETIRED_SCHEMA) await noteRetiredSchema(pool, logger);
      await boss.start();
      await boss.createQueue(queue, {
        policy: 'short',
        expireInSeconds: opts.expireSeconds ?? 120,
        // A job fails only when its instance died or storage failed: always try again.
        retryLimit: 1_000_000,
        retryDelay: 1,
      });
    } catch (err) {
      await boss.stop({ graceful: false, close: false }).catch(() => {});
      await pool.end().catch(() => {});
      throw err;
    }
    return new PgBossPushScheduler(boss, pool, queue, logger, {
      concurrency,
      runMs: opts.runMs ?? 30_000,
      busyRetryMs: opts.busyRetryMs ?? 1000,
      pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 2,
    });
  }

  start(drain: PushDrain): void {
    this.drain = drain;
    this.starting = (async () => {
      for (let i = 0; i < this.opts.concurrency; i++) {
        this.workers.push(
          await this.boss.work<JobData>(
            this.queue,
            { batchSize: 1, pollingIntervalSeconds: this.opts.pollingIntervalSeconds },
            (jobs) => this.handle(jobs),
          ),
        );
      }
    })().catch((err: unknown) => this.logger.error({ err }, 'starting the push queue workers failed'));
  }

  async wake(target: OutboxTarget, notBefore?: string): Promise<void> {
    await this.send(target, notBefore);
    if (notBefore === undefined || Date.parse(notBefore) <= Date.now()) this.nudge();
  }

  async resumeAll(targets: readonly OutboxTarget[]): Promise<void> {
    for (const t of targets) await this.send(t);
    if (targets.length > 0) this.nudge();
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Takes no more jobs (those in progress go on): the first step of stop(). */
  async stopFetching(): Promise<void> {
    this.fetching = false;
    await this.starting;
    await this.boss.offWork(this.queue);
  }

  /**
   * Stops: no more jobs are taken, those in progress end (the drain returns after its current
   * attempt and hands the rest to the queue), and the connections close. Jobs still active after
   * 5 s are failed, so another instance retries them.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.stopFetching();
    await this.boss.stop({ graceful: true, timeout: 5000, close: false }).catch((err: unknown) => {
      this.logger.warn({ err }, 'stopping the push queue failed');
    });
    await this.pool.end().catch(() => {});
  }

  private handle(jobs: ReadonlyArray<Job<JobData>>): Promise<void> {
    const p = (async () => {
      for (const job of jobs) await this.drainJob({ taskId: job.data.taskId, configId: job.data.configId });
    })();
    this.running.add(p);
    void p.catch(() => {}).finally(() => this.running.delete(p));
    return p;
  }

  private async drainJob(target: OutboxTarget): Promise<void> {
    const drain = this.drain;
    if (!drain) return;
    const key = lockKey(target);
    const client = await this.pool.connect();
    let locked = false;
    let broken = false;
    // The connection may fail while it only holds the lock (no query of ours to reject): that
    // must not end the process. The lock is gone with it; the unlock below then fails.
    const onError = (err: Error): void => {
      broken = true;
      this.logger.warn({ err: err.message, ...target }, 'the connection holding a push target lock failed');
    };
    client.on('error', onError);
    try {
      const r = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [
        LOCK_CLASS,
        key,
      ]);
      locked = r.rows[0]?.ok === true;
      if (!locked) {
        // Another instance drains it now; it may miss what was queued as it finished: look again soon.
        await this.send(target, new Date(Date.now() + this.opts.busyRetryMs).toISOString());
        return;
      }
      let left;
      try {
        left = await drain(target, Date.now() + this.opts.runMs);
      } catch (err) {
        this.logger.warn({ err, ...target }, 'draining push deliveries failed; the queue retries');
        throw err;
      }
      if (left.notBefore !== undefined) await this.send(target, left.notBefore);
    } catch (err) {
      broken = !locked;
      throw err;
    } finally {
      if (locked) {
        try {
          await client.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, key]);
        } catch {
          // The connection failed: its lock went with it (a destroyed connection frees it).
          broken = true;
        }
      }
      client.off('error', onError);
      client.release(broken);
    }
  }

  /** Queues a job for the target, due at `at` (default now); a job already queued for it absorbs this one. */
  private async send(target: OutboxTarget, at?: string): Promise<void> {
    try {
      await this.boss.send(
        this.queue,
        { taskId: target.taskId, configId: target.configId },
        at !== undefined && Date.parse(at) > Date.now()
          ? { singletonKey: lockKey(target), startAfter: at }
          : { singletonKey: lockKey(target) },
      );
    } catch (err) {
      // The entries stay in the outbox: the periodic resume sweep queues the target again.
      this.logger.warn({ err, ...target }, 'queueing a push delivery job failed');
    }
  }

  /** Idle workers of this instance look for a job now instead of at their next poll. */
  private nudge(): void {
    if (!this.fetching) return;
    for (const id of this.workers) this.boss.notifyWorker(id);
  }
}

/**
 * Says, once per start, that the pg-boss 10 schema of a previous version is no longer used, with
 * the step that removes it. Never drops it: an instance of that version may still be running.
 */
async function noteRetiredSchema(pool: pg.Pool, logger: Logger): Promise<void> {
  try {
    const table = `${RETIRED_SCHEMA}.version`;
    const found = await pool.query<{ t: string | null }>('select to_regclass($1)::text as t', [table]);
    if (!found.rows[0]?.t) return;
    const r = await pool.query<{ version: number }>(`select version from ${table} limit 1`);
    const version = r.rows[0]?.version;
    // 25 and later are pg-boss 11+ schemas, which pg-boss migrates (or another application's).
    if (version === undefined || version >= 25) return;
    logger.info(
      { schema: RETIRED_SCHEMA, version, now: PUSH_QUEUE_SCHEMA },
      `the push queue moved to schema "${PUSH_QUEUE_SCHEMA}"; once no instance of an older CleverAgents ` +
        `runs on this database, drop the old one: DROP SCHEMA ${RETIRED_SCHEMA} CASCADE`,
    );
  } catch {
    // Only a note: a role that cannot read the old schema does not need to hear of it.
  }
}

function lockKey(t: OutboxTarget): string {
  return `${t.taskId}\u001f${t.configId}`;
}
