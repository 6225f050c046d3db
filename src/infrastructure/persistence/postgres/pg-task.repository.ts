import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Task, TaskEvent } from '../../../domain/a2a.model.ts';
import type {
  MessageKey,
  MessageKeyHit,
  RunningTask,
  StoredPushConfig,
  StoredTask,
  StoredTaskView,
  TaskExpiry,
  TaskListQuery,
  TaskRef,
  TaskPage,
  TaskRepository,
} from '../../../application/index.ts';
import type { DB } from '../database-schema.ts';
import {
  appendValues,
  byContextQuery,
  countContextQuery,
  eventsAfterQuery,
  expiryPlan,
  listQueries,
  messageKeyQuery,
  messageKeyTaken,
  newTaskValues,
  pickExpired,
  seqTaken,
  snapshotValues,
  TASK_COLUMNS,
  taskExists,
  taskNotFound,
  TERMINAL_STATES,
  toEvent,
  firstMessagesOf,
  firstTasksQuery,
  refsByIdPrefixQuery,
  toStoredTask,
  toTaskView,
  toTaskPage,
  writeFenced,
  type EventRow,
  type ExpiredRow,
  type TaskRow,
} from '../rows/task.rows.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';
import { PgTaskWrites } from './pg-task-writes.ts';

/** The NOTIFY channel of committed task events: payload `<taskId> <seq> <runnerId>`. */
export const TASK_EVENTS_CHANNEL = 'ca_task_events';

export interface PgTaskRepositoryOptions {
  /** The runner (process lease) this instance runs turns under; stored with the tasks it runs. */
  runnerId: string;
}

/** The payload of a task-events notification. */
export function taskNotice(taskId: string, seq: number, runnerId: string): string {
  return `${taskId} ${seq} ${runnerId}`;
}

/** Parses {@link taskNotice} (the task id may hold spaces: seq and runner are the last two words). */
export function parseTaskNotice(payload: string): { taskId: string; seq: number; runnerId: string } | undefined {
  const r = payload.lastIndexOf(' ');
  const s = r < 0 ? -1 : payload.lastIndexOf(' ', r - 1);
  if (s < 0) return undefined;
  const seq = Number(payload.slice(s + 1, r));
  if (!Number.isSafeInteger(seq)) return undefined;
  return { taskId: payload.slice(0, s), seq, runnerId: payload.slice(r + 1) };
}

/** A task row with the events logged after its snapshot, as [seq, kind, payload] (one round trip). */
type RowWithEvents = TaskRow & { events: [number, string, string][] };

/** The events after a row's snapshot, aggregated in the row's own statement (one read snapshot). */
const EVENTS_AFTER_SNAPSHOT = sql<[number, string, string][]>`(
  select coalesce(json_agg(json_build_array(e.seq, e.kind, e.payload) order by e.seq), '[]'::json)
  from task_events e where e.task_id = tasks.id and e.seq > tasks.seq)`.as('events');

const TERMINAL = sql.join(TERMINAL_STATES.map((s) => sql.lit(s)));
/** A plan's chat context holds its tasks: they stay while the plan exists. */
const NOT_A_PLAN_TASK = sql`context_id not in (
  select doc::jsonb ->> 'contextId' from plans where doc::jsonb ->> 'contextId' is not null)`;

/**
 * Tasks in PostgreSQL, shared by every instance on the database. Each write is one statement
 * (data-modifying CTEs: the event, the snapshot and the notification in one round trip, atomic
 * without BEGIN/COMMIT), or one transaction with row locks where it reads before it writes.
 * Writes of one task run in call order, one statement at a time, the events queued behind a
 * statement in flight going together in the next (PgTaskWrites); different tasks run concurrently
 * on the pool. Every committed event is announced with NOTIFY (see {@link watch}).
 */
export class PgTaskRepository implements TaskRepository {
  private readonly runnerId: string;
  /** Each task's writes in call order; a turn's events batched (see PgTaskWrites). */
  private readonly writes: PgTaskWrites;

  private readonly db: PgDatabase;

  constructor(db: PgDatabase, opts: PgTaskRepositoryOptions) {
    this.db = db;
    this.runnerId = opts.runnerId;
    this.writes = new PgTaskWrites(db, this.runnerId, TASK_EVENTS_CHANNEL, (id, seq) =>
      taskNotice(id, seq, this.runnerId),
    );
  }

  async create(
    task: Task,
    owner: string,
    key?: MessageKey,
    push?: StoredPushConfig,
    startedBy?: string,
  ): Promise<void> {
    const v = newTaskValues(task, owner, key, this.runnerId, startedBy);
    // The owner's total and the context's count, in key order (as every writer of task_counts locks them).
    const counts =
      v.contextId === '' ? sql`(${v.owner}, '', 2)` : sql`(${v.owner}, '', 1), (${v.owner}, ${v.contextId}, 1)`;
    // The inline push config in the task's own statement: written on another connection it could
    // commit first and be refused by its foreign key (the task "not found").
    const config = push
      ? sql`, p as (insert into push_configs (task_id, id, config)
          select id, ${push.id}, ${JSON.stringify({ ...push, taskId: task.id })} from t)`
      : sql``;
    try {
      await this.writes.create(
        task.id,
        v.contextId,
        (extra) =>
          sql`with t as (
            insert into tasks (id, context_id, owner, state, created_at, updated_at, seq, snapshot, runner_id, message_id, message_hash, started_by)
            values (${v.id}, ${v.contextId}, ${v.owner}, ${v.state}, ${v.createdAt}, ${v.updatedAt}, 0, ${v.snapshot},
                    ${v.runnerId}, ${v.messageId}, ${v.hash}, ${v.startedBy})
            returning id),
          c as (
            insert into task_counts (owner, context_id, n) values ${counts}
            on conflict (owner, context_id) do update set n = task_counts.n + excluded.n)${config}${extra}
          select pg_notify(${TASK_EVENTS_CHANNEL}, ${taskNotice(task.id, 0, this.runnerId)}) from t`,
      );
    } catch (err) {
      if (isPgConstraintError(err, 'unique')) {
        const constraint = (err as { constraint?: unknown }).constraint;
        if (key && constraint === 'tasks_owner_message') throw messageKeyTaken(key.messageId);
        throw taskExists(task.id);
      }
      throw err;
    }
  }

  async get(id: string): Promise<StoredTask | undefined> {
    const row = await this.readTask(id);
    return row && materialise(row);
  }

  async getView(id: string): Promise<StoredTaskView | StoredTask | undefined> {
    const row = await this.readTask(id);
    return row && toTaskView(row, eventRows(row));
  }

  private readTask(id: string) {
    return this.db.run((k) =>
      k.selectFrom('tasks').select(TASK_COLUMNS).select(EVENTS_AFTER_SNAPSHOT).where('id', '=', id).executeTakeFirst(),
    );
  }

  async append(taskId: string, event: TaskEvent, snapshot?: Task, eventJson?: string, fenced = false): Promise<void> {
    const values = appendValues(taskId, event, snapshot, eventJson);
    let taken: boolean;
    try {
      taken = await this.writes.append(taskId, event.event.contextId, { values, fenced });
    } catch (err) {
      if (isPgConstraintError(err, 'foreign')) throw taskNotFound(taskId);
      if (isPgConstraintError(err, 'unique')) throw seqTaken(taskId, event.seq);
      throw err;
    }
    if (!taken) {
      // Refused by the guard (rare): say whether the task is gone or the write was fenced off.
      const row = await this.db.run((k) =>
        k.selectFrom('tasks').select('id').where('id', '=', taskId).executeTakeFirst(),
      );
      throw row ? writeFenced(taskId, event.seq) : taskNotFound(taskId);
    }
  }

  async findMessageKey(owner: string, messageId: string): Promise<MessageKeyHit | undefined> {
    const row = await this.db.run((k) => messageKeyQuery(k, owner, messageId).executeTakeFirst());
    // message_hash is set whenever message_id is, and only rows with a message_id match.
    return row && { taskId: row.task_id, hash: row.hash ?? '' };
  }

  /** Per owner through tasks_owner_state_updated (runner_id has no index: it would cost every send). */
  async listRunning(): Promise<RunningTask[]> {
    const rows = await this.db.run((k) =>
      sql<{ id: string; owner: string; runner_id: string }>`
        select t.id, t.owner, t.runner_id from task_counts c cross join lateral (
          select id, owner, runner_id from tasks
          where tasks.owner = c.owner and state in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
            and runner_id is not null) t
        where c.context_id = ''`.execute(k),
    );
    return rows.rows.map((r) => ({ id: r.id, owner: r.owner, runnerId: r.runner_id }));
  }

  async endTurn(taskId: string): Promise<void> {
    await this.writes.write(taskId, (k) =>
      k
        .updateTable('tasks')
        .set({ runner_id: null })
        .where('id', '=', taskId)
        .where('runner_id', '=', this.runnerId)
        .execute(),
    );
  }

  async saveSnapshot(task: Task, seq: number, key?: MessageKey, startedBy?: string): Promise<void> {
    const v = snapshotValues(task, seq, this.runnerId, startedBy);
    // The follow-up's key is inserted only when the task row was there to update.
    const insertKey = key
      ? sql`, k as (insert into message_keys (owner, message_id, task_id, hash)
          select ${key.owner}, ${key.messageId}, id, ${key.hash} from u)`
      : sql``;
    let found: number;
    try {
      found = await this.writes.write(task.id, async (k) => {
        const r = await sql`with u as (
            update tasks set state = ${v.state}, updated_at = ${v.updatedAt}, seq = ${v.seq}, snapshot = ${v.snapshot},
              runner_id = ${v.runnerId}, started_by = coalesce(${v.startedBy}, started_by) where id = ${v.id} returning id)${insertKey}
          select pg_notify(${TASK_EVENTS_CHANNEL}, ${taskNotice(task.id, seq, this.runnerId)}) from u`.execute(k);
        return r.rows.length;
      });
    } catch (err) {
      if (key && isPgConstraintError(err, 'unique')) throw messageKeyTaken(key.messageId);
      throw err;
    }
    if (found === 0) throw taskNotFound(task.id);
  }

  async eventsAfter(taskId: string, afterSeq: number): Promise<TaskEvent[]> {
    const rows = await this.db.run((k) => eventsAfterQuery(k, taskId, afterSeq).execute());
    return rows.map(toEvent);
  }

  async watch(handler: (taskId: string, seq: number, runnerId: string) => void): Promise<() => Promise<void>> {
    return this.db.listen(TASK_EVENTS_CHANNEL, (payload) => {
      if (payload === '') return handler('', 0, '');
      const notice = parseTaskNotice(payload);
      if (notice) handler(notice.taskId, notice.seq, notice.runnerId);
    });
  }

  async list(query: TaskListQuery): Promise<TaskPage> {
    const { limit, count, page } = listQueries(this.db.kysely, query);
    // One snapshot for the total and the page, as SQLite's read transaction gives.
    return this.db.run((k) =>
      k
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const total = (await trx.executeQuery(count.compile())).rows[0]?.n ?? 0;
          const rows = (await trx.executeQuery(page.select(EVENTS_AFTER_SNAPSHOT).compile())).rows;
          return toTaskPage(rows, limit, total, materialise);
        }),
    );
  }

  async deleteByContext(contextId: string): Promise<number> {
    return this.db.transaction(async (trx) => {
      // The delete locks the rows: a concurrent delete of the context waits, then finds them gone.
      // Events, push configs, keys, outbox entries and transcripts go by their foreign keys.
      const gone = await trx
        .deleteFrom('tasks')
        .where('context_id', '=', contextId)
        .returning(['id', 'owner', 'context_id'])
        .execute();
      await uncount(trx, gone);
      return gone.length;
    });
  }

  async countByContext(contextId: string): Promise<number> {
    const row = await this.db.run((k) => countContextQuery(k, contextId).executeTakeFirst());
    return row?.n ?? 0;
  }

  /**
   * Several instances may sweep at once: each locks the rows it chose (`for update skip locked`),
   * so no task is deleted or uncounted twice, and a task being written waits for the sweep.
   */
  async deleteExpired(expiry: TaskExpiry): Promise<number> {
    const plan = expiryPlan(expiry);
    if (!plan) return 0;
    const { before, keep, want } = plan;
    return this.db.transaction(async (trx) => {
      const candidates: ExpiredRow[][] = [];
      const choose = (where: RawBuilder<unknown>, n: number) =>
        sql<ExpiredRow>`select id, owner, context_id from tasks
          where state in (${TERMINAL}) and ${where} and ${NOT_A_PLAN_TASK}
          order by updated_at, id limit ${n} for update skip locked`.execute(trx);
      if (before !== undefined) candidates.push((await choose(sql`updated_at < ${before}`, want)).rows);
      if (keep !== undefined) {
        const counted = await sql<{ n: number }>`select count(*) as n from tasks
          where state in (${TERMINAL}) and ${NOT_A_PLAN_TASK}`.execute(trx);
        const excess = (counted.rows[0]?.n ?? 0) - keep;
        if (excess > 0) candidates.push((await choose(sql`true`, Math.min(excess, want))).rows);
      }
      const picked = pickExpired(candidates, plan.limit, (id) => expiry.isLive(id));
      if (picked.length === 0) return 0;
      const gone = await trx
        .deleteFrom('tasks')
        .where(
          'id',
          'in',
          picked.map((r) => r.id),
        )
        .where('state', 'in', TERMINAL_STATES)
        .returning(['id', 'owner', 'context_id'])
        .execute();
      await uncount(trx, gone);
      return gone.length;
    });
  }

  async firstMessages(contextIds: readonly string[]): Promise<Map<string, string>> {
    if (contextIds.length === 0) return new Map();
    return firstMessagesOf(await this.db.run((k) => firstTasksQuery(k, contextIds).execute()));
  }

  refsByIdPrefix(owner: string, prefix: string, limit: number): Promise<TaskRef[]> {
    return this.db.run((k) => refsByIdPrefixQuery(k, owner, prefix, limit).execute());
  }

  /** The newest `limit` tasks of a context, returned oldest first (the last turns of a chat). */
  async listByContext(contextId: string, limit: number): Promise<StoredTask[]> {
    const n = Math.max(0, Math.floor(limit));
    const rows = await this.db.run((k) => byContextQuery(k, contextId, n).select(EVENTS_AFTER_SNAPSHOT).execute());
    return rows.reverse().map(materialise);
  }
}

function materialise(row: RowWithEvents): StoredTask {
  return toStoredTask(row, eventRows(row));
}

function eventRows(row: RowWithEvents): EventRow[] {
  return row.events.map(([seq, kind, payload]): EventRow => ({ seq, kind, payload }));
}

/**
 * Takes deleted tasks out of the maintained counts (the owner's total and the context's; an
 * emptied context's row goes). The count rows are locked in key order first, the order in which
 * create locks them, so concurrent creates and deletes cannot deadlock.
 */
async function uncount(trx: Kysely<DB>, gone: readonly ExpiredRow[]): Promise<void> {
  const by = new Map<string, { owner: string; scope: string; n: number }>();
  for (const r of gone) {
    for (const scope of ['', r.context_id]) {
      const id = JSON.stringify([r.owner, scope]);
      const entry = by.get(id) ?? { owner: r.owner, scope, n: 0 };
      entry.n++;
      by.set(id, entry);
    }
  }
  if (by.size === 0) return;
  const rows = [...by.values()];
  const deltas = sql`unnest(${rows.map((r) => r.owner)}::text[], ${rows.map((r) => r.scope)}::text[],
    ${rows.map((r) => r.n)}::int[]) as d(owner, scope, n)`;
  await sql`select 1 from task_counts c join ${deltas} on c.owner = d.owner and c.context_id = d.scope
    order by c.owner, c.context_id for update of c`.execute(trx);
  await sql`update task_counts c set n = c.n - d.n from ${deltas}
    where c.owner = d.owner and c.context_id = d.scope`.execute(trx);
  await sql`delete from task_counts c using ${deltas}
    where c.owner = d.owner and c.context_id = d.scope and c.context_id <> '' and c.n <= 0`.execute(trx);
}
