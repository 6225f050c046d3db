import { sql, type OperationNodeSource } from 'kysely';
import type { PushConfigRepository, StoredPushConfig } from '../../../application/index.ts';
import {
  deletePushConfig,
  deletePushConfigs,
  listPushConfigs,
  pushConfigTaskMissing,
  selectPushConfig,
  toPushConfig,
  upsertPushConfig,
} from '../rows/push-config.rows.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';

/** The NOTIFY channel of committed push config changes: payload `<taskId>`. */
export const PUSH_CONFIGS_CHANNEL = 'ca_push_configs';

/**
 * Push-notification configs of tasks in PostgreSQL. Every change notifies the other instances in
 * its own statement (no extra round trip), so that one running the task's turns, which caches the
 * task's configs, sees it at its next event.
 */
export class PgPushConfigRepository implements PushConfigRepository {
  private readonly db: PgDatabase;

  constructor(db: PgDatabase) {
    this.db = db;
  }

  async put(config: StoredPushConfig): Promise<void> {
    const doc = JSON.stringify(config);
    try {
      await this.db.run((k) =>
        notifying(upsertPushConfig(k, config.taskId, config.id, doc).returning('task_id')).execute(k),
      );
    } catch (err) {
      if (isPgConstraintError(err, 'foreign')) throw pushConfigTaskMissing(config.taskId);
      throw err;
    }
  }

  async get(taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const row = await this.db.run((k) => selectPushConfig(k, taskId, id).executeTakeFirst());
    return row && toPushConfig(row);
  }

  async list(taskId: string): Promise<StoredPushConfig[]> {
    const rows = await this.db.run((k) => listPushConfigs(k, taskId).execute());
    return rows.map(toPushConfig);
  }

  async delete(taskId: string, id: string): Promise<boolean> {
    const r = await this.db.run((k) => notifying(deletePushConfig(k, taskId, id).returning('task_id')).execute(k));
    return r.rows.length > 0;
  }

  async deleteByTask(taskId: string): Promise<void> {
    await this.db.run((k) => notifying(deletePushConfigs(k, taskId).returning('task_id')).execute(k));
  }

  async watch(handler: (taskId: string) => void): Promise<() => Promise<void>> {
    return this.db.listen(PUSH_CONFIGS_CHANNEL, handler);
  }
}

/**
 * The change (returning its rows' task_id), then a notification per changed row, sent at commit
 * (PostgreSQL folds identical ones into one); one row per changed config.
 */
function notifying(change: OperationNodeSource) {
  return sql<{ n: unknown }>`with c as (${change}) select pg_notify(${PUSH_CONFIGS_CHANNEL}, task_id) as n from c`;
}
