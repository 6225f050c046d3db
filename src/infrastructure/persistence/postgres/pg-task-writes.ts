import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../database-schema.ts';
import { TERMINAL_STATES, type AppendValues } from '../rows/task.rows.ts';
import type { PgDatabase } from './pg-database.ts';
import { queueDeliveries } from './pg-push-outbox.repository.ts';

/**
 * At most this many events go in one statement: a turn's burst is a few dozen at most (the
 * recorder paces an actor at 64 unstored events), and a bound keeps one statement's size sane.
 */
export const MAX_EVENTS_PER_STATEMENT = 64;

/** An event to append, as the append statement takes it. */
export interface QueuedAppend {
  values: AppendValues;
  /** Refused unless the task still names this runner (a turn's event). */
  fenced: boolean;
}

type Settle = { resolve(value: unknown): void; reject(err: unknown): void };
type Op =
  | ({ kind: 'write'; write: (k: Kysely<DB>) => Promise<unknown> } & Settle)
  | ({ kind: 'append'; item: QueuedAppend } & Settle);

/**
 * The writes of each task, in call order, one statement at a time per task (different tasks run
 * concurrently on the pool): a group commit per task. While a task's statement is in flight, the
 * events asked for meanwhile queue and then go together as one multi-row statement, so a turn's
 * burst of events costs one or two round trips instead of one each (issue #40, point 7). The first
 * write of an idle task starts in a microtask, so the events of one synchronous burst share it too.
 * Every caller gets its own outcome (a statement's failure fails each write it carried).
 */
export class PgTaskWrites {
  /** Per task with writes queued or in flight: the ops not yet started. */
  private readonly queues = new Map<string, Op[]>();
  private readonly db: PgDatabase;
  private readonly runnerId: string;
  private readonly channel: string;
  private readonly notice: (taskId: string, seq: number) => string;

  constructor(db: PgDatabase, runnerId: string, channel: string, notice: (taskId: string, seq: number) => string) {
    this.db = db;
    this.runnerId = runnerId;
    this.channel = channel;
    this.notice = notice;
  }

  /** Runs `write` after the task's earlier writes settle (alone in its statement). */
  write<T>(taskId: string, write: (k: Kysely<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue(taskId, { kind: 'write', write, resolve, reject });
    });
  }

  /**
   * Appends an event after the task's earlier writes, in one statement with the other events
   * queued next to it. Resolves with whether the database took it (false: refused by the guard,
   * the task has ended or, fenced, is no longer run by this runner).
   */
  append(taskId: string, item: QueuedAppend): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.enqueue(taskId, { kind: 'append', item, resolve, reject });
    });
  }

  private enqueue(taskId: string, op: Op): void {
    const queue = this.queues.get(taskId);
    if (queue) {
      queue.push(op);
      return;
    }
    this.queues.set(taskId, [op]);
    queueMicrotask(() => void this.next(taskId));
  }

  /** Starts the task's next statement: its first queued op, with the appends right behind it. */
  private async next(taskId: string): Promise<void> {
    const queue = this.queues.get(taskId);
    const first = queue?.shift();
    if (!queue || !first) {
      this.queues.delete(taskId);
      return;
    }
    const ops: Op[] = [first];
    if (first.kind === 'append') {
      while (ops.length < MAX_EVENTS_PER_STATEMENT) {
        const o = queue[0];
        if (o?.kind !== 'append' || o.item.fenced !== first.item.fenced) break;
        ops.push(o);
        queue.shift();
      }
    }
    try {
      if (first.kind === 'write') first.resolve(await this.db.run(first.write));
      else {
        const appends = ops as Extract<Op, { kind: 'append' }>[];
        const taken = await this.db.run((k) =>
          this.appendAll(
            k,
            taskId,
            appends.map((o) => o.item),
          ),
        );
        for (const o of appends) o.resolve(taken);
      }
    } catch (err) {
      for (const o of ops) o.reject(err);
    }
    if (queue.length === 0) this.queues.delete(taskId);
    else void this.next(taskId);
  }

  /**
   * One statement for a run of events: the task's row locked by the guard (no key update: the
   * events' foreign key check still passes) while it has not ended and, fenced, still names this
   * runner — a settle committed meanwhile by another instance is seen here (the lock waits for it,
   * then reads the row again), so nothing follows a final event and a fenced-off turn writes
   * nothing. Then the events, the row's columns as the last of them leave it, each event's outbox
   * rows, and one NOTIFY with the last seq. True when the guard passed.
   */
  private async appendAll(k: Kysely<DB>, taskId: string, items: readonly QueuedAppend[]): Promise<boolean> {
    const owner = items[0]?.fenced ? sql`and runner_id = ${this.runnerId}` : sql``;
    const guard = sql`select id from tasks where id = ${taskId} and state not in (${sql.join(TERMINAL_STATES.map((s) => sql.lit(s)))}) ${owner}
      for no key update`;
    const seqs = items.map((i) => i.values.seq);
    const insert = sql`insert into task_events (task_id, seq, kind, payload)
      select g.id, v.seq, v.kind, v.payload from g cross join
        unnest(${seqs}::int[], ${items.map((i) => i.values.kind)}::text[], ${items.map((i) => i.values.payload)}::text[])
          as v(seq, kind, payload)
      returning task_id, seq, kind, payload`;
    const update = rowUpdate(items);
    const rest = update ? sql`, u as (${update})` : sql``;
    const last = seqs[seqs.length - 1] ?? 0;
    const r = await sql`with g as (${guard}), e as (${insert})${rest}, o as (${queueDeliveries(this.runnerId)})
      select pg_notify(${this.channel}, ${this.notice(taskId, last)}) from g`.execute(k);
    return r.rows.length > 0;
  }
}

/** The task row as the events leave it, applied in order: the last state, the last snapshot. */
function rowUpdate(items: readonly QueuedAppend[]): RawBuilder<unknown> | undefined {
  let state: { state: string; updatedAt: string } | undefined;
  let snap: { seq: number; snapshot: string } | undefined;
  for (const { values: v } of items) {
    if (v.state !== undefined && v.updatedAt !== undefined) state = { state: v.state, updatedAt: v.updatedAt };
    if (v.snapshot !== undefined) snap = { seq: v.seq, snapshot: v.snapshot };
  }
  if (!state) return undefined;
  const snapshot = snap ? sql`, seq = ${snap.seq}, snapshot = ${snap.snapshot}` : sql``;
  return sql`update tasks set state = ${state.state}, updated_at = ${state.updatedAt}${snapshot}
    from g where tasks.id = g.id`;
}
