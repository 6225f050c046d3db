import { RunnerLeases, type LeaseRow, type NewLease, type RunnerRegistryOptions } from '../runner-leases.ts';
import type { PgDatabase } from './pg-database.ts';

export type PgRunnerRegistryOptions = RunnerRegistryOptions;

/**
 * Runner leases in the PostgreSQL `runners` table, shared by every instance on the database
 * (semantics: {@link RunnerLeases}). Each statement stands alone: a prune deletes a lease only if
 * it was not renewed since it was judged dead, so a runner that renews meanwhile keeps it.
 */
export class PgRunnerRegistry extends RunnerLeases {
  private readonly db: PgDatabase;

  constructor(db: PgDatabase, opts: PgRunnerRegistryOptions) {
    super(opts);
    this.db = db;
  }

  protected async insertLease(row: NewLease): Promise<void> {
    await this.db.run((k) => k.insertInto('runners').values(row).execute());
  }

  protected renewLease(id: string, at: string): Promise<number> {
    return this.db.run(async (k) => {
      const r = await k.updateTable('runners').set({ heartbeat_at: at }).where('id', '=', id).executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
  }

  protected getLease(id: string): Promise<LeaseRow | undefined> {
    return this.db.run((k) =>
      k.selectFrom('runners').select(['pid', 'host', 'heartbeat_at']).where('id', '=', id).executeTakeFirst(),
    );
  }

  protected listLeases(): Promise<(LeaseRow & { id: string })[]> {
    return this.db.run((k) => k.selectFrom('runners').select(['id', 'pid', 'host', 'heartbeat_at']).execute());
  }

  protected removeLease(id: string, heartbeatAt?: string): Promise<number> {
    return this.db.run(async (k) => {
      let q = k.deleteFrom('runners').where('id', '=', id);
      if (heartbeatAt !== undefined) q = q.where('heartbeat_at', '=', heartbeatAt);
      return Number((await q.executeTakeFirst()).numDeletedRows);
    });
  }
}
