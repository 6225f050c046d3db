import { sql } from 'kysely';
import type { OutboxEntry, OutboxTarget, PushOutbox } from '../../application/index.js';
import { param, type PushOutboxTable, type SqliteDatabase } from './database.js';

/** The push outbox in SQLite (migration 0006); each entry is stamped with the runner that delivers it. */
export class SqlitePushOutboxRepository implements PushOutbox {
  private readonly q;
  private readonly insertAll;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly runnerId: string,
  ) {
    const k = db.kysely;
    const taskId = param<string>('taskId');
    const configId = param<string>('configId');
    const seq = param<number>('seq');
    this.q = {
      // A re-queued event (the same seq) keeps its first entry and its attempt count.
      insert: db.prepare(
        k
          .insertInto('push_outbox')
          .values({
            task_id: taskId,
            config_id: configId,
            seq,
            payload: param('payload'),
            attempts: sql.lit(0),
            next_attempt_at: param('at'),
            runner_id: param('runnerId'),
            created_at: param('at'),
          })
          .onConflict((oc) => oc.columns(['task_id', 'config_id', 'seq']).doNothing()),
      ),
      next: db.prepare<
        Pick<
          PushOutboxTable,
          'task_id' | 'config_id' | 'seq' | 'payload' | 'attempts' | 'next_attempt_at' | 'last_error'
        >
      >(
        k
          .selectFrom('push_outbox')
          .select(['task_id', 'config_id', 'seq', 'payload', 'attempts', 'next_attempt_at', 'last_error'])
          .where('task_id', '=', taskId)
          .where('config_id', '=', configId)
          .orderBy('seq')
          .limit(sql.lit(1)),
      ),
      remove: db.prepare(
        k
          .deleteFrom('push_outbox')
          .where('task_id', '=', taskId)
          .where('config_id', '=', configId)
          .where('seq', '=', seq),
      ),
      retry: db.prepare(
        k
          .updateTable('push_outbox')
          .set({ attempts: param('attempts'), next_attempt_at: param('at'), last_error: param('error') })
          .where('task_id', '=', taskId)
          .where('config_id', '=', configId)
          .where('seq', '=', seq),
      ),
      removeTarget: db.prepare(
        k.deleteFrom('push_outbox').where('task_id', '=', taskId).where('config_id', '=', configId),
      ),
      runners: db.prepare(k.selectFrom('push_outbox').select('runner_id').distinct()),
      // Taken over entries are due at once: the downtime has usually outlasted their backoff.
      takeOver: db.prepare(
        k
          .updateTable('push_outbox')
          .set({ runner_id: param('self'), next_attempt_at: param('at') })
          .where('runner_id', '=', param<string>('from')),
      ),
      takeOverUnowned: db.prepare(
        k
          .updateTable('push_outbox')
          .set({ runner_id: param('self'), next_attempt_at: param('at') })
          .where('runner_id', 'is', sql.lit(null)),
      ),
      mine: db.prepare(
        k
          .selectFrom('push_outbox')
          .select(['task_id', 'config_id'])
          .distinct()
          .where('runner_id', '=', param<string>('self')),
      ),
    };
    const q = this.q;
    this.insertAll = db.sqlite.transaction((rows: Array<Record<string, unknown>>) => {
      for (const r of rows) q.insert.run(r);
    });
  }

  async enqueue(
    entries: ReadonlyArray<Pick<OutboxEntry, 'taskId' | 'configId' | 'seq' | 'payload'>>,
    at: string,
  ): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map((e) => ({
      taskId: e.taskId,
      configId: e.configId,
      seq: e.seq,
      payload: e.payload,
      at,
      runnerId: this.runnerId,
    }));
    // One insert needs no savepoint; several are made atomic together (a nested transaction).
    const [only] = rows;
    await this.db.write(() => (rows.length === 1 && only ? this.q.insert.run(only) : this.insertAll(rows)));
  }

  async next(t: OutboxTarget): Promise<OutboxEntry | undefined> {
    const row = await this.db.exclusive(() => this.q.next.get({ taskId: t.taskId, configId: t.configId }));
    return (
      row && {
        taskId: row.task_id,
        configId: row.config_id,
        seq: row.seq,
        payload: row.payload,
        attempts: row.attempts,
        nextAttemptAt: row.next_attempt_at,
        lastError: row.last_error,
      }
    );
  }

  async remove(t: OutboxTarget, seq: number): Promise<void> {
    await this.db.write(() => this.q.remove.run({ taskId: t.taskId, configId: t.configId, seq }));
  }

  async retryLater(
    t: OutboxTarget,
    seq: number,
    attempts: number,
    nextAttemptAt: string,
    lastError: string,
  ): Promise<void> {
    await this.db.write(() =>
      this.q.retry.run({
        taskId: t.taskId,
        configId: t.configId,
        seq,
        attempts,
        at: nextAttemptAt,
        error: lastError.slice(0, 1000),
      }),
    );
  }

  async removeTarget(t: OutboxTarget): Promise<void> {
    await this.db.write(() => this.q.removeTarget.run({ taskId: t.taskId, configId: t.configId }));
  }

  async claim(isLive: (runnerId: string | null) => Promise<boolean>, at: string): Promise<OutboxTarget[]> {
    const self = this.runnerId;
    for (const { runner_id: from } of await this.db.exclusive(() => this.q.runners.all())) {
      if (from === self) continue;
      if (from === null) await this.db.write(() => this.q.takeOverUnowned.run({ self, at }));
      else if (!(await isLive(from))) await this.db.write(() => this.q.takeOver.run({ self, from, at }));
    }
    const rows = await this.db.exclusive(() => this.q.mine.all({ self }));
    return rows.map((r) => ({ taskId: r.task_id, configId: r.config_id }));
  }
}
