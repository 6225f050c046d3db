import type { NamespaceLimitsRepository, StoredLimits, UsageCounter, UsageLedger } from '../../../application/index.ts';
import type { LimitOverrides } from '../../../domain/quota.ts';
import type { SqlRunner } from './sql-runner.ts';

/** States of a turn that still runs (what a user's concurrent turns count). */
const RUNNING = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'];

/**
 * Per-user limits' storage on either engine: what users use — running turns counted from the task
 * rows (the user who started each task's latest turn, and its state), model tokens from the
 * ledger of model steps (`model_usage`) — and namespaces' overrides of the default limits.
 */
export class QuotaTableStore implements UsageCounter, UsageLedger, NamespaceLimitsRepository {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async runningTurns(user: string): Promise<number> {
    const row = await this.db.run((k) =>
      k
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('started_by', '=', user)
        .where('state', 'in', RUNNING)
        .executeTakeFirst(),
    );
    return Number(row?.n ?? 0);
  }

  async tokensSince(user: string, since: string): Promise<number> {
    // One range read of the (user_id, at, tokens) index: a user's steps of one day.
    const row = await this.db.run((k) =>
      k
        .selectFrom('model_usage')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('tokens'), eb.lit(0)).as('n'))
        .where('user_id', '=', user)
        .where('at', '>=', since)
        .executeTakeFirst(),
    );
    return Number(row?.n ?? 0);
  }

  async record(user: string, tokens: number, at: string): Promise<void> {
    await this.db.run((k) => k.insertInto('model_usage').values({ user_id: user, at, tokens }).execute());
  }

  async prune(before: string): Promise<number> {
    const r = await this.db.run((k) => k.deleteFrom('model_usage').where('at', '<', before).executeTakeFirst());
    return Number(r.numDeletedRows);
  }

  async list(): Promise<StoredLimits[]> {
    const rows = await this.db.run((k) => k.selectFrom('namespace_limits').selectAll().execute());
    return rows.map(toStored);
  }

  async get(namespace: string): Promise<StoredLimits | undefined> {
    const row = await this.db.run((k) =>
      k.selectFrom('namespace_limits').selectAll().where('namespace', '=', namespace).executeTakeFirst(),
    );
    return row && toStored(row);
  }

  async put(entry: StoredLimits): Promise<void> {
    const set = Object.values(entry.limits).some((v) => typeof v === 'number');
    await this.db.run(async (k) => {
      if (!set) {
        await k.deleteFrom('namespace_limits').where('namespace', '=', entry.namespace).execute();
        return;
      }
      const row = { limits: JSON.stringify(entry.limits), updated_at: entry.updatedAt, updated_by: entry.updatedBy };
      await k
        .insertInto('namespace_limits')
        .values({ namespace: entry.namespace, ...row })
        .onConflict((oc) => oc.column('namespace').doUpdateSet(row))
        .execute();
    });
  }
}

function toStored(r: { namespace: string; limits: string; updated_at: string; updated_by: string }): StoredLimits {
  return {
    namespace: r.namespace,
    limits: JSON.parse(r.limits) as LimitOverrides,
    updatedAt: r.updated_at,
    updatedBy: r.updated_by,
  };
}
