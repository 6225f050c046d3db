import type { Task, TaskEvent, TaskState } from '../../domain/a2a.model.ts';
import type { UpdateCursor } from '../../domain/paging.ts';
import type { JsonText } from '../../domain/json.ts';
import type { StoredPushConfig } from './push-config.repository.port.ts';

export interface StoredTask {
  task: Task;
  owner: string;
  /** Sequence number of the last event folded into `task`. */
  seq: number;
  /** The runner that last ran a turn of the task (see RunnerRegistry); null when unknown. */
  runnerId?: string | null | undefined;
}

/**
 * A stored task whose snapshot text is already what a client is sent for it (viewTask's output
 * without a history limit): no event was logged after the snapshot, and no empty list is in it (a
 * view leaves out empty artifacts and history). Sent without parsing and serialising it again.
 */
export interface StoredTaskView {
  owner: string;
  view: JsonText<Task>;
}

/** A position in a principal's tasks, newest first. */
export type TaskCursor = UpdateCursor;

/** A task named by a prefix of its id: enough to tell the candidates apart. */
export interface TaskRef {
  id: string;
  contextId: string;
  state: string;
  updatedAt: string;
}

export interface TaskListQuery {
  owner: string;
  contextId?: string | undefined;
  state?: TaskState | undefined;
  /** Only tasks whose status timestamp is at or after this instant. */
  updatedSince?: string | undefined;
  limit: number;
  /** Continue strictly after this position (newest first). */
  after?: TaskCursor | undefined;
}

/** Which finished tasks retention may delete (see {@link TaskRepository.deleteExpired}). */
export interface TaskExpiry {
  /** Terminal tasks whose status changed before this instant (ISO, UTC). */
  before?: string | undefined;
  /** Keep only this many terminal tasks (the newest); older ones go. */
  keep?: number | undefined;
  /** At most this many tasks per call (a sweep calls again until fewer go). */
  limit: number;
  /** Tasks a live turn or subscriber holds: never deleted. Asked in the deleting transaction. */
  isLive(taskId: string): boolean;
}

/**
 * The idempotency key of a sent message: (owner, messageId) names the task the message started or
 * continued; `hash` fingerprints its content so a reuse of the id for other content is refused.
 */
export interface MessageKey {
  owner: string;
  messageId: string;
  hash: string;
}

/** Where a stored message key points. */
export interface MessageKeyHit {
  taskId: string;
  hash: string;
}

/** A task still submitted or working, and the runner (process lease) that runs it. */
export interface RunningTask {
  id: string;
  owner: string;
  runnerId: string;
}

export interface TaskPage {
  tasks: StoredTask[];
  total: number;
  /** Present when more tasks follow. */
  next?: TaskCursor | undefined;
}

/**
 * Tasks and their append-only event log. Artifact chunks are only appended to the log; status
 * events rewrite the snapshot in the same transaction, so a snapshot plus the artifact events after
 * it always reconstructs the task, even after a crash.
 */
export interface TaskRepository {
  /**
   * Stores a new task (run by this process's runner). With `key`, the message key is stored in the
   * same write; when the key already exists nothing is stored and the call fails with
   * ALREADY_EXISTS and `details.messageId` (a concurrent send of the same message won).
   * With `push`, that push config (of this task) is stored in the same write too: a webhook given
   * with the message exists exactly when its task does, on every engine and connection.
   * `startedBy`: the user who sent the message (per-user limits count their turns and tokens).
   */
  create(task: Task, owner: string, key?: MessageKey, push?: StoredPushConfig, startedBy?: string): Promise<void>;
  /** The task a message key points to, if the key is stored. */
  findMessageKey(owner: string, messageId: string): Promise<MessageKeyHit | undefined>;
  /** Tasks still submitted or working under some runner (what a stopped process may have left running). */
  listRunning(): Promise<RunningTask[]>;
  /**
   * The turn this process ran ended with the task still submitted or working (an actor may leave
   * a task working, to be cancelled or continued later): no process runs it now, so it is not
   * stranded if this process stops.
   */
  endTurn(taskId: string): Promise<void>;
  get(id: string): Promise<StoredTask | undefined>;
  /**
   * What GetTask sends: the stored snapshot's text, as it is, when it is the client's view of the
   * task as it stands (see {@link StoredTaskView}); otherwise the task as `get` reads it.
   */
  getView(id: string): Promise<StoredTaskView | StoredTask | undefined>;
  /**
   * Appends an event; when `snapshot` is given it becomes the stored task at `event.seq`. Appends
   * of one task may be issued before earlier ones settle: they must be applied in call order.
   * `event` and `snapshot` are read during the call only (they may change afterwards).
   * `eventJson`, when given, is `JSON.stringify(event.event)`, done by the caller already.
   *
   * Fencing (checked by the database in the append's own statement): nothing is appended after a
   * task's final (terminal) event, and with `fenced` — an event of a turn this process runs — only
   * while the task's row still names this process's runner. A refused append fails with
   * INVALID_STATE and `details.fenced: true`, and nothing of it is stored.
   * PostgreSQL also queues the event's push deliveries (the outbox) in the same statement.
   */
  append(taskId: string, event: TaskEvent, snapshot?: Task, eventJson?: string, fenced?: boolean): Promise<void>;
  /**
   * Rewrites the snapshot (history changes) at the given sequence number; the task is then run by
   * this process's runner. With `key`, the message key is stored in the same write (and the call
   * fails as {@link create} does when it exists). With `startedBy` (a follow-up's sender), the
   * task's latest turn is theirs from now on (per-user limits count their running turns from it).
   */
  saveSnapshot(task: Task, seq: number, key?: MessageKey, startedBy?: string): Promise<void>;
  eventsAfter(taskId: string, afterSeq: number): Promise<TaskEvent[]>;
  /**
   * A value that changes whenever another process may have written to the store (SQLite: PRAGMA
   * data_version), so followers of the log read it only then. Optional: without it they always read.
   */
  logVersion?(): Promise<unknown>;
  /**
   * Calls `handler` soon after any process sharing the store (this one included) commits events
   * of a task, with the task id, the newest stored seq and the runner (process lease) that wrote
   * them. A task id of '' means "look at every followed task again" (notifications may have been
   * lost, e.g. the listening connection dropped). Returns the way to stop. Optional: without it
   * followers poll ({@link logVersion}). PostgreSQL: LISTEN/NOTIFY, delivered on commit.
   */
  watch?(handler: (taskId: string, seq: number, runnerId: string) => void): Promise<() => Promise<void>>;
  list(query: TaskListQuery): Promise<TaskPage>;
  /** Deletes every task of a context with their events; returns how many tasks went. */
  deleteByContext(contextId: string): Promise<number>;
  countByContext(contextId: string): Promise<number>;
  /**
   * Retention: deletes terminal tasks (with their events and push configs, keeping the maintained
   * counts right) that are expired by age or count, never a live one, never a plan's (a task in
   * the context of an existing plan). Returns how many went.
   */
  deleteExpired(expiry: TaskExpiry): Promise<number>;
  listByContext(contextId: string, limit: number): Promise<StoredTask[]>;
  /** The text of the first user message of each context that has a task (a page of sessions in one read). */
  firstMessages(contextIds: readonly string[]): Promise<Map<string, string>>;
  /** Up to `limit` of the owner's tasks whose id starts with `prefix` (`%` and `_` are plain characters), newest first. */
  refsByIdPrefix(owner: string, prefix: string, limit: number): Promise<TaskRef[]>;
}
