import { hostname } from 'node:os';
import type { Logger, RunnerRegistry } from '../../application/index.js';
import { param, type SqliteDatabase } from './database.js';

export interface SqliteRunnerRegistryOptions {
  id: string;
  /** A lease not renewed for this long is expired (its process is taken for dead). */
  leaseMs?: number | undefined;
  logger: Logger;
  pid?: number;
  host?: string;
  now?: () => number;
}

const DEFAULT_LEASE_MS = 15_000;

/**
 * Runner leases in the `runners` table (migration 0005). A runner is dead when its row is gone
 * (a clean stop deletes it), when its lease has expired, or — on this host — at once when its
 * process no longer exists (`kill(pid, 0)`), so a restart after SIGKILL need not wait for the
 * lease. A pid equal to ours under another runner id is a previous incarnation (containers reuse
 * pid 1).
 */
export class SqliteRunnerRegistry implements RunnerRegistry {
  readonly self: string;
  private readonly leaseMs: number;
  private readonly pid: number;
  private readonly host: string;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private readonly q;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly opts: SqliteRunnerRegistryOptions,
  ) {
    this.self = opts.id;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.pid = opts.pid ?? process.pid;
    this.host = opts.host ?? hostname();
    this.now = opts.now ?? Date.now;
    const k = db.kysely;
    const id = param<string>('id');
    this.q = {
      insert: db.prepare(
        k
          .insertInto('runners')
          .values({ id, pid: param('pid'), host: param('host'), started_at: param('at'), heartbeat_at: param('at') }),
      ),
      renew: db.prepare(
        k
          .updateTable('runners')
          .set({ heartbeat_at: param('at') })
          .where('id', '=', id),
      ),
      get: db.prepare(k.selectFrom('runners').select(['pid', 'host', 'heartbeat_at']).where('id', '=', id)),
      all: db.prepare(k.selectFrom('runners').select('id')),
      remove: db.prepare(k.deleteFrom('runners').where('id', '=', id)),
    };
  }

  /** Takes the lease and renews it every third of its length until {@link stop}. */
  async start(): Promise<void> {
    const at = new Date(this.now()).toISOString();
    await this.db.write(() => this.q.insert.run({ id: this.self, pid: this.pid, host: this.host, at }));
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  async isLive(runnerId: string | null | undefined): Promise<boolean> {
    if (!runnerId) return false;
    if (runnerId === this.self) return this.timer !== undefined;
    const row = await this.db.exclusive(() => this.q.get.get({ id: runnerId }));
    if (!row) return false;
    if (row.host === this.host) {
      if (row.pid === this.pid) return false;
      if (!processExists(row.pid)) return false;
    }
    return this.now() - Date.parse(row.heartbeat_at) <= this.leaseMs;
  }

  /** Deletes the rows of runners that are dead (housekeeping; their tasks are settled first). */
  async prune(): Promise<number> {
    let n = 0;
    for (const { id } of await this.db.exclusive(() => this.q.all.all())) {
      if (id !== this.self && !(await this.isLive(id))) n += await this.db.write(() => this.q.remove.run({ id }));
    }
    return n;
  }

  /** Gives the lease up: what this process still runs is then anyone's to settle. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.db.write(() => this.q.remove.run({ id: this.self }));
  }

  private async renew(): Promise<void> {
    try {
      const at = new Date(this.now()).toISOString();
      const changed = await this.db.write(() => this.q.renew.run({ id: this.self, at }));
      // Pruned by another process that took us for dead (e.g. after a long pause): take it again.
      if (changed === 0)
        await this.db.write(() => this.q.insert.run({ id: this.self, pid: this.pid, host: this.host, at }));
    } catch (err) {
      this.opts.logger.warn({ err }, 'renewing the runner lease failed');
    }
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
