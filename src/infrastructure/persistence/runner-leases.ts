import { hostname } from 'node:os';
import type { Logger } from '../../application/index.ts';
import type { LeasedRunnerRegistry } from './storage.ts';
import { processExists } from '../system/process-exists.ts';

export interface RunnerRegistryOptions {
  id: string;
  /**
   * The longest a dead runner's turns stay unsettled: from its death, another settles them within
   * this (see {@link RunnerLeases.expiresAfterMs} and {@link RunnerLeases.sweepEveryMs}).
   */
  leaseMs?: number | undefined;
  logger: Logger;
  pid?: number;
  host?: string;
  now?: () => number;
}

export const DEFAULT_LEASE_MS = 15_000;

/** A lease as stored (the `runners` table, migration 0005). */
export interface LeaseRow {
  pid: number;
  host: string;
  heartbeat_at: string;
}

/** A new lease row: started and renewed now. */
export interface NewLease extends LeaseRow {
  id: string;
  started_at: string;
}

/**
 * Runner leases in the `runners` table, on either engine (the subclass stores the rows). A runner
 * is dead when its row is gone (a clean stop deletes it), when its lease has expired, or — on this
 * host — at once when its process no longer exists (`kill(pid, 0)`), so a restart after SIGKILL
 * need not wait for the lease. A pid equal to ours under another runner id is a previous
 * incarnation (containers reuse pid 1).
 */
export abstract class RunnerLeases implements LeasedRunnerRegistry {
  readonly self: string;
  readonly leaseMs: number;
  /**
   * How often the lease is renewed: a sixth of it, so that a live runner misses four renewals
   * before it is taken for dead (see {@link expiresAfterMs}).
   */
  readonly renewEveryMs: number;
  /**
   * A lease not renewed for this long (three quarters of it) is expired: its process is taken for
   * dead. With {@link sweepEveryMs}, a death is settled by at most 3/4 + 1/5 = 19/20 of the lease
   * after the last renewal, which came no later than the death (issue #40, point 9: it took up to
   * ~2×). Not less: a busy instance whose renewals wait for a pooled connection must not be taken
   * for dead.
   */
  readonly expiresAfterMs: number;
  /** How often another runner looks for stranded work (Upkeep): a fifth of the lease. */
  readonly sweepEveryMs: number;
  private readonly pid: number;
  private readonly host: string;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  private readonly opts: RunnerRegistryOptions;

  constructor(opts: RunnerRegistryOptions) {
    this.opts = opts;
    this.self = opts.id;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.renewEveryMs = Math.max(50, Math.floor(this.leaseMs / 6));
    this.expiresAfterMs = Math.floor((this.leaseMs * 3) / 4);
    this.sweepEveryMs = Math.max(50, Math.floor(this.leaseMs / 5));
    this.pid = opts.pid ?? process.pid;
    this.host = opts.host ?? hostname();
    this.now = opts.now ?? Date.now;
  }

  /** Stores a new lease (the id is not taken). */
  protected abstract insertLease(row: NewLease): Promise<void>;
  /** Sets the heartbeat of a lease; returns how many rows changed (0: the row is gone). */
  protected abstract renewLease(id: string, at: string): Promise<number>;
  protected abstract getLease(id: string): Promise<LeaseRow | undefined>;
  /** Every lease row. */
  protected abstract listLeases(): Promise<(LeaseRow & { id: string })[]>;
  /** Deletes a lease; with `heartbeatAt`, only if it was not renewed since (another process may have). */
  protected abstract removeLease(id: string, heartbeatAt?: string): Promise<number>;

  /** Takes the lease and renews it every {@link renewEveryMs} until {@link stop}. */
  async start(): Promise<void> {
    await this.insertLease(this.newLease());
    this.timer = setInterval(() => void this.renew(), this.renewEveryMs);
    this.timer.unref();
  }

  async isLive(runnerId: string | null | undefined): Promise<boolean> {
    if (!runnerId) return false;
    if (runnerId === this.self) return this.timer !== undefined;
    const row = await this.getLease(runnerId);
    return row !== undefined && this.rowIsLive(row);
  }

  /** How many runners hold a live lease now, this one included while it holds its own. */
  async liveCount(): Promise<number> {
    const rows = await this.listLeases();
    return rows.filter((r) => (r.id === this.self ? this.timer !== undefined : this.rowIsLive(r))).length;
  }

  /** Deletes the rows of runners that are dead (housekeeping; their tasks are settled first). */
  async prune(): Promise<number> {
    let n = 0;
    for (const row of await this.listLeases()) {
      if (row.id !== this.self && !this.rowIsLive(row)) n += await this.removeLease(row.id, row.heartbeat_at);
    }
    return n;
  }

  /** Gives the lease up: what this process still runs is then anyone's to settle. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.removeLease(this.self);
  }

  /** Renews the lease now (the timer calls this); a row pruned meanwhile is taken again. */
  async renew(): Promise<void> {
    try {
      const lease = this.newLease();
      const changed = await this.renewLease(this.self, lease.heartbeat_at);
      // Pruned by another process that took us for dead (e.g. after a long pause): take it again.
      if (changed === 0) await this.insertLease(lease);
    } catch (err) {
      this.opts.logger.warn({ err }, 'renewing the runner lease failed');
    }
  }

  private newLease(): NewLease {
    const at = new Date(this.now()).toISOString();
    return { id: this.self, pid: this.pid, host: this.host, started_at: at, heartbeat_at: at };
  }

  private rowIsLive(row: LeaseRow): boolean {
    if (row.host === this.host) {
      if (row.pid === this.pid) return false;
      if (!processExists(row.pid)) return false;
    }
    return this.now() - Date.parse(row.heartbeat_at) <= this.expiresAfterMs;
  }
}
