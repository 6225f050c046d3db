import type { OutboxEntry, OutboxTarget, PushOutbox } from '../../application/index.ts';
import { param, type SqliteDatabase } from './database.ts';
import {
  insertOutboxEntry,
  LAST_ERROR_MAX,
  nextOutboxEntry,
  outboxRunners,
  outboxTargetsOf,
  removeOutboxEntry,
  removeOutboxTarget,
  retryOutboxEntry,
  takeOverOutbox,
  toOutboxEntry,
  type OutboxRow,
} from './rows/push-outbox.rows.ts';

/** The push outbox in SQLite (migration 0006); each entry is stamped with the runner that delivers it. */
export class SqlitePushOutboxRepository implements PushOutbox {
  private readonly q;
  private readonly insertAll;

  private readonly db: SqliteDatabase;
  private readonly runnerId: string;

  constructor(db: SqliteDatabase, runnerId: string) {
    this.db = db;
    this.runnerId = runnerId;
    const k = db.kysely;
    const taskId = param<string>('taskId');
    const configId = param<string>('configId');
    const seq = param<number>('seq');
    const self = param<string>('self');
    const at = param<string>('at');
    this.q = {
      insert: db.prepare(
        insertOutboxEntry(k, {
          taskId,
          configId,
          seq,
          payload: param('payload'),
          at,
          runnerId: param('runnerId'),
        }),
      ),
      next: db.prepare<OutboxRow>(nextOutboxEntry(k, taskId, configId)),
      remove: db.prepare(removeOutboxEntry(k, taskId, configId, seq)),
      retry: db.prepare(
        retryOutboxEntry(k, { taskId, configId, seq, attempts: param('attempts'), at, error: param('error') }),
      ),
      removeTarget: db.prepare(removeOutboxTarget(k, taskId, configId)),
      runners: db.prepare(outboxRunners(k)),
      takeOver: db.prepare(takeOverOutbox(k, self, param<string>('from'), at)),
      takeOverUnowned: db.prepare(takeOverOutbox(k, self, null, at)),
      mine: db.prepare(outboxTargetsOf(k, self)),
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
    return row && toOutboxEntry(row);
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
        error: lastError.slice(0, LAST_ERROR_MAX),
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
