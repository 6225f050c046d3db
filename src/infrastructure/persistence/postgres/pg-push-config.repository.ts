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

/** Push-notification configs of tasks in PostgreSQL; a put is one upsert. */
export class PgPushConfigRepository implements PushConfigRepository {
  private readonly db: PgDatabase;

  constructor(db: PgDatabase) {
    this.db = db;
  }

  async put(config: StoredPushConfig): Promise<void> {
    const doc = JSON.stringify(config);
    try {
      await this.db.run((k) => upsertPushConfig(k, config.taskId, config.id, doc).execute());
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
    const r = await this.db.run((k) => deletePushConfig(k, taskId, id).executeTakeFirst());
    return Number(r.numDeletedRows) > 0;
  }

  async deleteByTask(taskId: string): Promise<void> {
    await this.db.run((k) => deletePushConfigs(k, taskId).execute());
  }
}
