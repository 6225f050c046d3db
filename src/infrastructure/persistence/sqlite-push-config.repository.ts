import { AppError } from '../../domain/errors.js';
import type { PushConfigRepository, StoredPushConfig } from '../../application/index.js';
import { isConstraintError, param, type SqliteDatabase } from './database.js';

/** Push-notification configs of tasks; each is stored whole as JSON, credentials included. */
export class SqlitePushConfigRepository implements PushConfigRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    const k = db.kysely;
    const taskId = param<string>('taskId');
    const id = param<string>('id');
    this.q = {
      // ON CONFLICT … DO UPDATE is spelled the same in SQLite and PostgreSQL.
      upsert: db.prepare(
        k
          .insertInto('push_configs')
          .values({ task_id: taskId, id, config: param('config') })
          .onConflict((oc) =>
            oc.columns(['task_id', 'id']).doUpdateSet((eb) => ({ config: eb.ref('excluded.config') })),
          ),
      ),
      get: db.prepare(k.selectFrom('push_configs').select('config').where('task_id', '=', taskId).where('id', '=', id)),
      list: db.prepare(k.selectFrom('push_configs').select('config').where('task_id', '=', taskId).orderBy('id')),
      delete: db.prepare(k.deleteFrom('push_configs').where('task_id', '=', taskId).where('id', '=', id)),
      deleteByTask: db.prepare(k.deleteFrom('push_configs').where('task_id', '=', taskId)),
    };
  }

  async put(config: StoredPushConfig): Promise<void> {
    const params = { taskId: config.taskId, id: config.id, config: JSON.stringify(config) };
    try {
      // In a group commit: an inline config lands in the same transaction as its new task (after its row).
      await this.db.write(() => this.q.upsert.run(params));
    } catch (err) {
      if (isConstraintError(err, 'FOREIGNKEY')) {
        throw new AppError('TASK_NOT_FOUND', `Task ${config.taskId} was not found`, {
          details: { taskId: config.taskId },
        });
      }
      throw err;
    }
  }

  async get(taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const row = await this.db.exclusive(() => this.q.get.get({ taskId, id }));
    return row && (JSON.parse(row.config) as StoredPushConfig);
  }

  async list(taskId: string): Promise<StoredPushConfig[]> {
    const rows = await this.db.exclusive(() => this.q.list.all({ taskId }));
    return rows.map((r) => JSON.parse(r.config) as StoredPushConfig);
  }

  async delete(taskId: string, id: string): Promise<boolean> {
    return (await this.db.exclusive(() => this.q.delete.run({ taskId, id }))) > 0;
  }

  async deleteByTask(taskId: string): Promise<void> {
    await this.db.exclusive(() => this.q.deleteByTask.run({ taskId }));
  }
}
