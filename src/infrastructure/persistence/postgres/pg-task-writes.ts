import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../database-schema.ts';
import { TERMINAL_STATES, type AppendValues } from '../rows/task.rows.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';
import { queueDeliveries } from './pg-push-outbox.repository.ts';
import { PgSessionWrites, type SessionWork, type SessionWorkCarrier } from './pg-session-writes.ts';

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
/** A write that can carry a session's work (see PgSessionWrites): a create or an append. */
type Carrier = { contextId: string; session?: SessionWork | undefined };
type Op =
  | ({ kind: 'write'; write: (k: Kysely<DB>) => Promise<unknown> } & Settle)
  | ({ kind: 'create'; build: (extra: RawBuilder<unknown>) => RawBuilder<unknown> } & Carrier & Settle)
  | ({ kind: 'append'; item: QueuedAppend } & Carrier & Settle);
type CarrierOp = Extract<Op, Carrier>;

/**
 * The writes of each task, in call order, one statement at a time per task (different tasks run
 * concurrently on the pool): a group commit per task. While a task's statement is in flight, the
 * events asked for meanwhile queue and then go together as one multi-row statement, so a turn's
 * burst of events costs one or two round trips instead of one each (issue #40, point 7). The first
 * write of an idle task starts in a microtask, so the events of one synchronous burst share it too.
 * A create or an append still queued carries the session bookkeeping of its context (its new row,
 * a task counted, its activity: PgSessionWrites). Every caller gets its own outcome (a statement's
 * failure fails each write it carried; carried session work then runs on its own).
 */
export class PgTaskWrites implements SessionWorkCarrier {
  /** Per task with writes queued or in flight: the ops not yet started. */
  private readonly queues = new Map<string, Op[]>();
  /** Per session: the last queued (not started) write of one of its tasks that can carry its work. */
  private readonly carriers = new Map<string, CarrierOp>();
  private readonly db: PgDatabase;
  private readonly sessions: PgSessionWrites;
  private readonly runnerId: string;
  private readonly channel: string;
  private readonly notice: (taskId: string, seq: number) => string;

  constructor(db: PgDatabase, runnerId: string, channel: string, notice: (taskId: string, seq: number) => string) {
    this.db = db;
    this.runnerId = runnerId;
    this.channel = channel;
    this.notice = notice;
    this.sessions = PgSessionWrites.of(db);
    this.sessions.addCarrier(this);
  }

  /** Runs `write` after the task's earlier writes settle (alone in its statement). */
  write<T>(taskId: string, write: (k: Kysely<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue(taskId, { kind: 'write', write, resolve, reject });
    });
  }

  /**
   * Creates a task (its first write): `build` makes the statement with `extra` CTEs after its own
   * (the session work it carries; the statement must not read them).
   */
  create(
    taskId: string,
    contextId: string,
    build: (extra: RawBuilder<unknown>) => RawBuilder<unknown>,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.enqueue(taskId, { kind: 'create', build, contextId, resolve, reject });
    });
  }

  /**
   * Appends an event after the task's earlier writes, in one statement with the other events
   * queued next to it. Resolves with whether the database took it (false: refused by the guard,
   * the task has ended or, fenced, is no longer run by this runner).
   */
  append(taskId: string, contextId: string, item: QueuedAppend): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.enqueue(taskId, { kind: 'append', item, contextId, resolve, reject });
    });
  }

  workFor(sessionId: string): SessionWork | undefined {
    const op = this.carriers.get(sessionId);
    if (!op) return undefined;
    return (op.session ??= { id: sessionId, added: 0, settles: [] });
  }

  private enqueue(taskId: string, op: Op): void {
    if (op.kind !== 'write') {
      op.session = this.sessions.claim(op.contextId);
      this.carriers.set(op.contextId, op);
    }
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
    for (const o of ops)
      if (o.kind !== 'write' && this.carriers.get(o.contextId) === o) this.carriers.delete(o.contextId);
    await this.run(taskId, ops, true);
    if (queue.length === 0) this.queues.delete(taskId);
    else void this.next(taskId);
  }

  /**
   * One statement for `ops`, with the session work they carry. A constraint failure with session
   * work aboard is run again without it (the work goes alone): each learns its own outcome.
   */
  private async run(taskId: string, ops: readonly Op[], carry: boolean): Promise<void> {
    const first = ops[0];
    if (!first) return;
    const works = carry ? sessionWorks(ops) : [];
    const extra = sql.join(
      works.map((w, i) => this.sessions.cte(`s${i}`, w)),
      sql``,
    );
    let result: unknown;
    try {
      if (first.kind === 'write') result = await this.db.run(first.write);
      else if (first.kind === 'create') result = await this.db.run((k) => first.build(extra).execute(k));
      else result = await this.db.run((k) => this.appendAll(k, taskId, ops as CarrierOp[], extra));
    } catch (err) {
      if (works.length > 0 && (isPgConstraintError(err, 'unique') || isPgConstraintError(err, 'foreign'))) {
        for (const w of works) void this.sessions.alone(w);
        return this.run(taskId, ops, false);
      }
      for (const o of ops) o.reject(err);
      for (const w of works) for (const s of w.settles) s.reject(err);
      return;
    }
    for (const o of ops) o.resolve(result);
    for (const w of works) for (const s of w.settles) s.resolve();
  }

  /**
   * One statement for a run of events: the task's row locked by the guard (no key update: the
   * events' foreign key check still passes) while it has not ended and, fenced, still names this
   * runner — a settle committed meanwhile by another instance is seen here (the lock waits for it,
   * then reads the row again), so nothing follows a final event and a fenced-off turn writes
   * nothing. Then the events, the row's columns as the last of them leave it, each event's outbox
   * rows, and one NOTIFY with the last seq. True when the guard passed.
   */
  private async appendAll(
    k: Kysely<DB>,
    taskId: string,
    ops: readonly CarrierOp[],
    extra: RawBuilder<unknown>,
  ): Promise<boolean> {
    const items = ops.map((o) => (o as Extract<Op, { kind: 'append' }>).item);
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
    const r = await sql`with g as (${guard}), e as (${insert})${rest}, o as (${queueDeliveries(this.runnerId)})${extra}
      select pg_notify(${this.channel}, ${this.notice(taskId, last)}) from g`.execute(k);
    return r.rows.length > 0;
  }
}

/** The session work of `ops`, merged per session (a task's writes are all in its one session). */
function sessionWorks(ops: readonly Op[]): SessionWork[] {
  const by = new Map<string, SessionWork>();
  for (const o of ops) {
    if (o.kind === 'write' || !o.session) continue;
    const w = by.get(o.session.id);
    if (!w) by.set(o.session.id, o.session);
    else {
      // A second carrier of the same session's work (rare): one statement cannot update a row twice.
      if (o.session.insert) w.insert ??= o.session.insert;
      w.added += o.session.added;
      if (o.session.at !== undefined && (w.at === undefined || o.session.at > w.at)) w.at = o.session.at;
      w.settles.push(...o.session.settles);
    }
  }
  return [...by.values()];
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
