import { sql, type RawBuilder } from 'kysely';
import type { NamespaceLimitsRepository, StoredLimits, UsageCounter } from '../../../application/index.ts';
import type { LimitOverrides } from '../../../domain/quota.ts';
import type { SqlRunner } from './sql-runner.ts';

/** States of a turn that still runs (what a user's concurrent turns count). */
const RUNNING = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'];

/**
 * Per-user limits' storage on either engine: what users use, counted from the task rows (the user
 * who started each task, its state, and the model usage its last turn stored in
 * `metadata.usage`), and namespaces' overrides of the default limits.
 */
export class QuotaTableStore implements UsageCounter, NamespaceLimitsRepository {
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
    // The usage a turn records is in its task's snapshot; tasks changed today are few per user.
    const tokens: RawBuilder<number | string> =
      this.db.engine === 'postgresql'
        ? sql`coalesce(sum(
            coalesce(((snapshot::jsonb) #>> '{metadata,usage,inputTokens}')::numeric, 0) +
            coalesce(((snapshot::jsonb) #>> '{metadata,usage,outputTokens}')::numeric, 0)), 0)`
        : sql`coalesce(sum(
            coalesce(json_extract(snapshot, '$.metadata.usage.inputTokens'), 0) +
            coalesce(json_extract(snapshot, '$.metadata.usage.outputTokens'), 0)), 0)`;
    const row = await this.db.run((k) =>
      k
        .selectFrom('tasks')
        .select(tokens.as('n'))
        .where('started_by', '=', user)
        .where('updated_at', '>=', since)
        .executeTakeFirst(),
    );
    return Number(row?.n ?? 0);
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
