import type { OutboxEntry, OutboxTarget, PushOutbox } from '../../../application/index.ts';
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
} from '../rows/push-outbox.rows.ts';
import { sql, type RawBuilder } from 'kysely';
import type { PgDatabase } from './pg-database.ts';

/**
 * The push outbox in PostgreSQL: the same table and contract as SQLite. Entries are stamped with
 * the runner that queued them; which instance delivers a target is the push scheduler's (one at a
 * time per target), so every statement here is a single one. A take-over is one conditional
 * update: two instances claiming the same dead runner's entries serialise on the row locks, and
 * the second finds them owned already.
 */
export class PgPushOutboxRepository implements PushOutbox {
  /** PgTaskRepository.append queues an event's deliveries in the event's own statement. */
  readonly queuedWithEvents = true;
  private readonly db: PgDatabase;
  private readonly runnerId: string;

  constructor(db: PgDatabase, runnerId: string) {
    this.db = db;
    this.runnerId = runnerId;
  }

  async enqueue(
    entries: ReadonlyArray<Pick<OutboxEntry, 'taskId' | 'configId' | 'seq' | 'payload'>>,
    at: string,
  ): Promise<void> {
    if (entries.length === 0) return;
    const runnerId = this.runnerId;
    // One statement per entry in one transaction: all or none.
    await this.db.transaction(async (trx) => {
      for (const e of entries) await insertOutboxEntry(trx, { ...e, at, runnerId }).execute();
    });
  }

  async next(t: OutboxTarget): Promise<OutboxEntry | undefined> {
    const row = await this.db.run((k) => nextOutboxEntry(k, t.taskId, t.configId).executeTakeFirst());
    return row && toOutboxEntry(row);
  }

  async remove(t: OutboxTarget, seq: number): Promise<void> {
    await this.db.run((k) => removeOutboxEntry(k, t.taskId, t.configId, seq).execute());
  }

  async retryLater(
    t: OutboxTarget,
    seq: number,
    attempts: number,
    nextAttemptAt: string,
    lastError: string,
  ): Promise<void> {
    const error = lastError.slice(0, LAST_ERROR_MAX);
    await this.db.run((k) =>
      retryOutboxEntry(k, {
        taskId: t.taskId,
        configId: t.configId,
        seq,
        attempts,
        at: nextAttemptAt,
        error,
      }).execute(),
    );
  }

  async removeTarget(t: OutboxTarget): Promise<void> {
    await this.db.run((k) => removeOutboxTarget(k, t.taskId, t.configId).execute());
  }

  async claim(isLive: (runnerId: string | null) => Promise<boolean>, at: string): Promise<OutboxTarget[]> {
    const self = this.runnerId;
    for (const { runner_id: from } of await this.db.run((k) => outboxRunners(k).execute())) {
      if (from === self) continue;
      if (from === null || !(await isLive(from))) await this.db.run((k) => takeOverOutbox(k, self, from, at).execute());
    }
    const rows = await this.db.run((k) => outboxTargetsOf(k, self).execute());
    return rows.map((r) => ({ taskId: r.task_id, configId: r.config_id }));
  }
}

/**
 * The event's push deliveries, one outbox row per config of its task, in the event's own statement:
 * a committed event always has its deliveries queued (issue #40, point 5), whichever instance
 * created the config. The payload is the A2A StreamResponse, built from the stored event text.
 * A data-modifying CTE of PgTaskRepository.append: `e` is the inserted event (task_id, seq, kind,
 * payload).
 */
export function queueDeliveries(runnerId: string): RawBuilder<unknown> {
  const at = new Date().toISOString();
  return sql`insert into push_outbox (task_id, config_id, seq, payload, attempts, next_attempt_at, runner_id, created_at)
    select e.task_id, c.id, e.seq,
      '{"' || case when e.kind = 'status' then 'statusUpdate' else 'artifactUpdate' end || '":' || e.payload || '}',
      0, ${at}, ${runnerId}, ${at}
    from e join push_configs c on c.task_id = e.task_id
    on conflict (task_id, config_id, seq) do nothing`;
}
