/*
 * What the SQLite and PostgreSQL task repositories share: the row <-> domain mapping, the errors
 * they throw, the values they write, and the query shapes both run (written against Kysely<DB>:
 * SQLite prepares them with param() placeholders, PostgreSQL executes them with values).
 */
import type { Kysely } from 'kysely';
import { idStartsWith } from './id-prefix.ts';
import type { Task, TaskEvent } from '../../../domain/a2a.model.ts';
import { applyEvent, isTerminal, TASK_STATES } from '../../../domain/a2a.model.ts';
import { AppError } from '../../../domain/errors.ts';
import type {
  MessageKey,
  StoredTask,
  StoredTaskView,
  TaskExpiry,
  TaskListQuery,
  TaskPage,
} from '../../../application/index.ts';
import { JsonText } from '../../../domain/json.ts';
import { olderThan } from '../database.ts';
import { toIsoInstant } from '../iso-instant.ts';
import { type DB } from '../database-schema.ts';

export interface TaskRow {
  id: string;
  owner: string;
  updated_at: string;
  seq: number;
  snapshot: string;
  runner_id: string | null;
}

export interface EventRow {
  seq: number;
  kind: string;
  payload: string;
}

export const TASK_COLUMNS = ['id', 'owner', 'updated_at', 'seq', 'snapshot', 'runner_id'] as const;

/** The states retention may delete. */
export const TERMINAL_STATES: readonly string[] = TASK_STATES.filter(isTerminal);

export function toEvent(row: EventRow): TaskEvent {
  // The kind column is written only from TaskEvent.kind, so the pairing below holds.
  return { seq: row.seq, kind: row.kind, event: JSON.parse(row.payload) as unknown } as TaskEvent;
}

/**
 * The snapshot with every event logged after it folded in: progress states, artifacts, and the
 * status messages a running task's snapshot does not hold yet (TaskEventRecorder rewrites it only
 * every so many events), in event order after its history.
 */
export function toStoredTask(row: TaskRow, eventsAfterSnapshot: Iterable<EventRow>): StoredTask {
  const task = JSON.parse(row.snapshot) as Task;
  let seq = row.seq;
  for (const ev of eventsAfterSnapshot) {
    const event = toEvent(ev);
    applyEvent(task, event);
    seq = event.seq;
  }
  const stored: StoredTask = { task, owner: row.owner, seq };
  if (row.runner_id !== null) stored.runnerId = row.runner_id;
  return stored;
}

/**
 * What GetTask reads (TaskRepository.getView): the snapshot's text itself when it is the client's
 * view as it stands — no event follows it, and no `[]` anywhere in it (a view leaves out empty
 * artifacts and history; an empty list anywhere, even inside a message, takes the long way) —
 * else the task with the later events folded in.
 */
export function toTaskView(row: TaskRow, eventsAfterSnapshot: readonly EventRow[]): StoredTaskView | StoredTask {
  if (eventsAfterSnapshot.length === 0 && !row.snapshot.includes('[]'))
    return { owner: row.owner, view: new JsonText<Task>(row.snapshot) };
  return toStoredTask(row, eventsAfterSnapshot);
}

/** The message key is already stored: another send of the same message created its task first. */
export function messageKeyTaken(messageId: string): AppError {
  return new AppError('ALREADY_EXISTS', `Message ${messageId} was already sent`, { details: { messageId } });
}

export function taskNotFound(id: string): AppError {
  return new AppError('TASK_NOT_FOUND', `Task ${id} was not found`, { details: { taskId: id } });
}

export function taskExists(id: string): AppError {
  return new AppError('ALREADY_EXISTS', `Task ${id} already exists`, { details: { taskId: id } });
}

export function seqTaken(taskId: string, seq: number): AppError {
  return new AppError('INVALID_STATE', `Task ${taskId} already has an event with seq ${seq}`, {
    details: { taskId, seq },
  });
}

/**
 * An append refused by the database: the task has ended (nothing follows its final event), or the
 * turn that wrote it is no longer this process's (fencing: another process settled the task or
 * runs it now, e.g. after this one was paused past its lease).
 */
export function writeFenced(taskId: string, seq: number): AppError {
  return new AppError(
    'INVALID_STATE',
    `Task ${taskId} has ended or is run by another process: its event ${seq} from this process was refused`,
    { details: { taskId, fenced: true } },
  );
}

/** The values of a new task row (seq 0, run by `runnerId`). */
export function newTaskValues(
  task: Task,
  owner: string,
  key: MessageKey | undefined,
  runnerId: string | null,
  startedBy: string | undefined,
) {
  const at = toIsoInstant(task.status.timestamp ?? new Date().toISOString(), 'task.status.timestamp');
  return {
    id: task.id,
    contextId: task.contextId,
    owner,
    state: task.status.state,
    createdAt: at,
    updatedAt: at,
    seq: 0,
    snapshot: JSON.stringify(task),
    runnerId,
    messageId: key?.messageId ?? null,
    hash: key?.hash ?? null,
    startedBy: startedBy ?? null,
  };
}

/**
 * What an append writes: the event, and (for a status event or a snapshot) the listing columns.
 * A type alias, not an interface, so it binds as a statement's parameters without a copy.
 */
export type AppendValues = {
  id: string;
  seq: number;
  kind: string;
  payload: string;
  /** Set when the task row changes too. */
  state?: string;
  updatedAt?: string;
  /** Set when the snapshot is replaced. */
  snapshot?: string;
  /** Set for a turn's event: stored only while the task names this runner (fencing). */
  runnerId?: string;
};

export function appendValues(
  taskId: string,
  event: TaskEvent,
  snapshot: Task | undefined,
  eventJson = JSON.stringify(event.event),
): AppendValues {
  const values: AppendValues = { id: taskId, seq: event.seq, kind: event.kind, payload: eventJson };
  // A status event moves the listing columns even without a snapshot (get folds it back in);
  // a snapshot replaces the stored task whatever the event, and the columns follow it.
  const status = snapshot?.status ?? (event.kind === 'status' ? event.event.status : undefined);
  if (status) {
    values.state = status.state;
    values.updatedAt = toIsoInstant(status.timestamp ?? new Date().toISOString(), 'status.timestamp');
  }
  if (snapshot) values.snapshot = JSON.stringify(snapshot);
  return values;
}

/** The values saveSnapshot writes (the task is then run by `runnerId`; `startedBy`: a follow-up's sender). */
export function snapshotValues(task: Task, seq: number, runnerId: string | null, startedBy?: string) {
  return {
    startedBy: startedBy ?? null,
    id: task.id,
    state: task.status.state,
    updatedAt: toIsoInstant(task.status.timestamp ?? new Date().toISOString(), 'task.status.timestamp'),
    seq,
    snapshot: JSON.stringify(task),
    runnerId,
  };
}

/** One statement (one read) for both places a key lives: a task's first message, or a follow-up. */
export function messageKeyQuery(k: Kysely<DB>, owner: string, messageId: string) {
  return k
    .selectFrom('tasks')
    .select(['id as task_id', 'message_hash as hash'])
    .where('owner', '=', owner)
    .where('message_id', '=', messageId)
    .unionAll(
      k
        .selectFrom('message_keys')
        .select(['task_id', 'hash'])
        .where('owner', '=', owner)
        .where('message_id', '=', messageId),
    );
}

export function eventsAfterQuery(k: Kysely<DB>, taskId: string, afterSeq: number) {
  return k
    .selectFrom('task_events')
    .select(['seq', 'kind', 'payload'])
    .where('task_id', '=', taskId)
    .where('seq', '>', afterSeq)
    .orderBy('seq');
}

/** The newest turns of a context; the caller reverses them to oldest first. */
export function byContextQuery(k: Kysely<DB>, contextId: string, limit: number) {
  return k
    .selectFrom('tasks')
    .select(TASK_COLUMNS)
    .where('context_id', '=', contextId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
}

/** The owner's tasks whose id starts with `prefix`, newest first (TaskRepository.refsByIdPrefix). */
export function refsByIdPrefixQuery(k: Kysely<DB>, owner: string, prefix: string, limit: number) {
  return k
    .selectFrom('tasks')
    .select(['id', 'context_id as contextId', 'state', 'updated_at as updatedAt'])
    .where('owner', '=', owner)
    .where(idStartsWith('id', prefix))
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
}

/** The first task of each of these contexts (its snapshot starts with the message that opened it). */
export function firstTasksQuery(k: Kysely<DB>, contextIds: readonly string[]) {
  return k
    .selectFrom('tasks as t')
    .select(['t.context_id as contextId', 't.snapshot'])
    .where('t.context_id', 'in', [...contextIds])
    .where('t.created_at', '=', (eb) =>
      eb
        .selectFrom('tasks as f')
        .select((f) => f.fn.min('f.created_at').as('first'))
        .whereRef('f.context_id', '=', 't.context_id'),
    )
    .orderBy('t.id');
}

/** The words of the message that opened each context, from its first task's snapshot (the first row wins a tie). */
export function firstMessagesOf(rows: readonly { contextId: string; snapshot: string }[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rows) {
    if (out.has(r.contextId)) continue;
    const task = JSON.parse(r.snapshot) as Task;
    const first = task.history?.find((m) => m.role === 'ROLE_USER');
    // What was typed: a part carrying a file (a chat's @path mention) is not the message's words.
    const text = first?.parts
      .filter((p) => p.filename === undefined)
      .map((p) => p.text)
      .filter((t) => t !== undefined)
      .join(' ');
    if (text) out.set(r.contextId, text);
  }
  return out;
}

/** A maintained count (migration 0004): context_id '' is the owner's total. */
export function countOfQuery(k: Kysely<DB>, owner: string, scope: string) {
  return k.selectFrom('task_counts').select('n').where('owner', '=', owner).where('context_id', '=', scope);
}

export function countContextQuery(k: Kysely<DB>, contextId: string) {
  return k
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('context_id', '=', contextId);
}

/** The queries of one ListTasks page: the rows (one more than the limit) and how to count them. */
export function listQueries(k: Kysely<DB>, query: TaskListQuery) {
  const limit = Math.max(0, Math.floor(query.limit));
  let filtered = k.selectFrom('tasks').where('owner', '=', query.owner);
  if (query.contextId !== undefined) filtered = filtered.where('context_id', '=', query.contextId);
  if (query.state !== undefined) filtered = filtered.where('state', '=', query.state);
  if (query.updatedSince !== undefined) {
    filtered = filtered.where('updated_at', '>=', toIsoInstant(query.updatedSince, 'updatedSince'));
  }
  // The owner's total and a context's total are kept up to date; other filters count rows.
  const maintained = query.state === undefined && query.updatedSince === undefined && query.contextId !== '';
  const count = maintained
    ? countOfQuery(k, query.owner, query.contextId ?? '')
    : filtered.select((eb) => eb.fn.countAll<number>().as('n'));
  let page = filtered.select(TASK_COLUMNS);
  if (query.after) page = page.where(olderThan(query.after));
  return {
    limit,
    count,
    page: page
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1),
  };
}

/** A page from the rows of {@link listQueries} (`limit` + 1 of them when more follow). */
export function toTaskPage<R extends TaskRow>(
  rows: R[],
  limit: number,
  total: number,
  materialise: (row: R) => StoredTask,
): TaskPage {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  const page: TaskPage = { tasks: kept.map(materialise), total };
  if (more && last) page.next = { updatedAt: last.updated_at, id: last.id };
  return page;
}

/** A task retention may delete. */
export interface ExpiredRow {
  id: string;
  owner: string;
  context_id: string;
}

/** What one retention sweep asks for, or undefined when it deletes nothing. */
export function expiryPlan(expiry: TaskExpiry) {
  const limit = Math.max(0, Math.floor(expiry.limit));
  if (limit === 0 || (expiry.before === undefined && expiry.keep === undefined)) return undefined;
  const before = expiry.before === undefined ? undefined : toIsoInstant(expiry.before, 'before');
  const keep = expiry.keep === undefined ? undefined : Math.max(0, expiry.keep);
  // Live tasks are skipped, so ask for a few more than the limit.
  return { limit, before, keep, want: limit + 16 };
}

/** The candidates (expired by age, then by count) to delete: at most `limit`, never a live one. */
export function pickExpired(
  candidates: Iterable<ExpiredRow[]>,
  limit: number,
  isLive: (taskId: string) => boolean,
): ExpiredRow[] {
  const chosen = new Map<string, ExpiredRow>();
  for (const rows of candidates) for (const r of rows) chosen.set(r.id, r);
  const picked: ExpiredRow[] = [];
  for (const r of chosen.values()) {
    if (picked.length >= limit) break;
    if (!isLive(r.id)) picked.push(r);
  }
  return picked;
}
