import type { PushConfigRepository, StoredPushConfig } from '../../application/index.ts';
import { isConstraintError } from './storage-failures.ts';
import { param, type SqliteDatabase } from './database.ts';
import {
  deletePushConfig,
  deletePushConfigs,
  listPushConfigs,
  pushConfigTaskMissing,
  selectPushConfig,
  toPushConfig,
  upsertPushConfig,
} from './rows/push-config.rows.ts';

/**
 * Push-notification configs of tasks; each is stored whole as JSON, credentials included. Several
 * processes may share the file (local agents, a server): {@link version} tells a cache when
 * another one may have changed a config.
 */
export class SqlitePushConfigRepository implements PushConfigRepository {
  private readonly q;
  private readonly dataVersion: { get(): unknown };
  private seen: unknown;
  private changes = 0;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.db = db;
    const k = db.kysely;
    const taskId = param<string>('taskId');
    const id = param<string>('id');
    this.q = {
      upsert: db.prepare(upsertPushConfig(k, taskId, id, param('config'))),
      get: db.prepare(selectPushConfig(k, taskId, id)),
      list: db.prepare(listPushConfigs(k, taskId)),
      delete: db.prepare(deletePushConfig(k, taskId, id)),
      deleteByTask: db.prepare(deletePushConfigs(k, taskId)),
    };
    // A counter read, not a statement on the data: it needs no connection lock.
    this.dataVersion = db.sqlite.prepare('PRAGMA data_version').pluck();
  }

  /**
   * Moves with this repository's own writes and with every commit of another connection to the
   * file (`PRAGMA data_version`, which cannot say what changed: any of them may be a config).
   * One process alone on the file never moves it but by changing a config.
   */
  version(): number {
    const other = this.dataVersion.get();
    if (other !== this.seen) {
      this.seen = other;
      this.changes++;
    }
    return this.changes;
  }

  async put(config: StoredPushConfig): Promise<void> {
    const params = { taskId: config.taskId, id: config.id, config: JSON.stringify(config) };
    try {
      // In a group commit: an inline config lands in the same transaction as its new task (after its row).
      await this.db.write(() => this.q.upsert.run(params));
      this.changes++;
    } catch (err) {
      if (isConstraintError(err, 'FOREIGNKEY')) throw pushConfigTaskMissing(config.taskId);
      throw err;
    }
  }

  async get(taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const row = await this.db.exclusive(() => this.q.get.get({ taskId, id }));
    return row && toPushConfig(row);
  }

  async list(taskId: string): Promise<StoredPushConfig[]> {
    const rows = await this.db.exclusive(() => this.q.list.all({ taskId }));
    return rows.map(toPushConfig);
  }

  async delete(taskId: string, id: string): Promise<boolean> {
    const n = await this.db.exclusive(() => this.q.delete.run({ taskId, id }));
    this.changes++;
    return n > 0;
  }

  async deleteByTask(taskId: string): Promise<void> {
    await this.db.exclusive(() => this.q.deleteByTask.run({ taskId }));
    this.changes++;
  }
}
