import {
  applyEvent,
  isInterrupted,
  isTerminal,
  type Artifact,
  type Message,
  type Task,
  type TaskEvent,
  type TaskState,
} from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { ArtifactOptions, StatusExtra } from '../ports/actor.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { StoredTask, TaskRepository } from '../ports/task.repository.port.ts';
import { toItem, type LiveTask } from './live-tasks.service.ts';
import { viewTask } from './task.views.ts';
import type { StreamItem, TaskEventObserver } from './task.types.ts';

/** How many of its events an actor may have in flight to storage before it waits for them. */
export const MAX_UNSTORED_EVENTS = 64;

/**
 * How many events may follow a running task's stored snapshot before a status message rewrites
 * it. A read folds the events after the snapshot in (their status messages into the history), so
 * this bounds that fold, while a long turn's progress messages no longer rewrite the whole,
 * growing history each time (a 100-step plan posts two per step).
 */
export const SNAPSHOT_EVERY_EVENTS = 32;

export interface TaskEventRecorderDeps {
  tasks: Pick<TaskRepository, 'append' | 'get'>;
  sessions: { recordActivity(contextId: string, at: string): Promise<unknown> };
  logger: Logger;
  now: () => Date;
  /** Who sees every event (push notifications): given when the recorder is made, never added later. */
  observers?: readonly TaskEventObserver[] | undefined;
}

/**
 * Records a live task's events: applies each to the task, stores it, then delivers it to the
 * task's listeners and the taps — strictly in event order, with storage started at once so a
 * burst shares one group commit — and paces the actor when too many are still unstored.
 */
export class TaskEventRecorder {
  private readonly deps: TaskEventRecorderDeps;

  constructor(deps: TaskEventRecorderDeps) {
    this.deps = deps;
  }

  /** A status event; ignored once the task is terminal, or (unless `force`) once its turn is aborted. */
  status(live: LiveTask, state: TaskState, text?: string, force = false, extra: StatusExtra = {}): Promise<void> {
    if (isTerminal(live.task.status.state)) return live.chain;
    if (!force && live.abort.aborted) return live.chain;
    const { id: taskId, contextId } = live.task;
    const status: Task['status'] = { state, timestamp: this.deps.now().toISOString() };
    if (text !== undefined || extra.data !== undefined) {
      const parts: Message['parts'] = [];
      if (text !== undefined) parts.push({ text });
      if (extra.data !== undefined) parts.push({ data: extra.data, mediaType: 'application/json' });
      // It joins the history as the event is applied (applyEvent), as it does for every reader.
      status.message = { messageId: newId(), role: 'ROLE_AGENT', parts, taskId, contextId };
    }
    const event: TaskEvent = { seq: ++live.seq, kind: 'status', event: { taskId, contextId, status } };
    if (extra.taskMetadata) {
      live.task.metadata = { ...live.task.metadata, ...extra.taskMetadata };
      event.event.metadata = { ...extra.metadata, ...extra.taskMetadata };
    } else if (extra.metadata) event.event.metadata = extra.metadata;
    return this.record(live, event);
  }

  artifact(live: LiveTask, artifact: Artifact, opts: ArtifactOptions = {}): Promise<void> {
    if (isTerminal(live.task.status.state) || live.abort.aborted) return live.chain;
    const { id: taskId, contextId } = live.task;
    const event: TaskEvent = { seq: ++live.seq, kind: 'artifact', event: { taskId, contextId, artifact, ...opts } };
    return this.record(live, event);
  }

  /**
   * What an actor waits for after an event: nothing while few of its events are still being
   * stored, so a burst is stored and sent in one go; once too many are, until they all are.
   */
  paced(live: LiveTask, recorded: Promise<void>): Promise<void> {
    if (live.failure !== undefined) {
      // The turn reports the failure when it ends (TurnRunner); this event's rejection is that same one.
      recorded.catch(() => {});
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the turn's failure, as it was caught.
      return Promise.reject(live.failure);
    }
    if (live.backlog < MAX_UNSTORED_EVENTS) {
      recorded.catch(() => {}); // the actor learns of a failure at its next event
      return Promise.resolve();
    }
    return recorded;
  }

  /** Applies, stores, then delivers one event, after every event before it. */
  private record(live: LiveTask, ev: TaskEvent): Promise<void> {
    applyEvent(live.task, ev);
    // A status event rewrites the stored snapshot when it settles the task, or when it adds to the
    // history and enough events followed the stored snapshot (SNAPSHOT_EVERY_EVENTS); anything
    // else only moves the listing columns, and reading the task folds it back in.
    const status = ev.kind === 'status' ? ev.event.status : undefined;
    const settles = status !== undefined && (isTerminal(status.state) || isInterrupted(status.state));
    const adds = status?.message !== undefined;
    const since = (live.sinceSnapshot ?? 0) + 1;
    const rewrite = settles || (adds && since >= SNAPSHOT_EVERY_EVENTS);
    live.sinceSnapshot = rewrite ? 0 : since;
    // The repository reads the snapshot during the call only (see TaskRepository.append): no copy.
    const snapshot = rewrite ? viewTask(live.task, { copy: false }) : undefined;
    // Serialised once: the same text is stored and, by a transport that can, sent.
    const eventJson = JSON.stringify(ev.event);
    const item = toItem(ev, eventJson);
    // Storing starts now, in event order (the repository applies writes in the order they are
    // asked for), so a burst of events shares one group commit; delivery still waits for each
    // event to be stored, strictly in order. The session's activity moves with the history and
    // with a settled turn, not with every progress state.
    // While a turn of this process runs the task, its events are fenced: the database refuses
    // them once another process has settled the task or runs it (e.g. after this one was paused).
    const appended = this.deps.tasks.append(live.task.id, ev, snapshot, eventJson, live.running > 0);
    for (const o of this.deps.observers ?? []) o.recording?.(live.task.id, item);
    const stored: Promise<unknown> =
      settles || adds
        ? Promise.all([appended, this.deps.sessions.recordActivity(live.task.contextId, status?.timestamp ?? '')])
        : appended;
    stored.catch(() => {}); // observed through the chain below
    live.backlog++;
    live.chain = live.chain
      .then(() => stored)
      .then(
        () => {
          live.backlog--;
          this.deliver(live, item);
        },
        (err: unknown) => {
          live.backlog--;
          if (isSeqTaken(err) || isFencedOff(err)) return this.yieldTo(live, ev, err);
          const failure = storedUpTo(live.task.id, ev.seq, err);
          live.failure ??= failure;
          throw failure;
        },
      );
    return live.chain;
  }

  /** Hands a stored event to the task's listeners and the taps. */
  private deliver(live: LiveTask, item: StreamItem): void {
    for (const l of [...live.listeners]) l(item);
    for (const o of this.deps.observers ?? []) {
      // An observer's failure (e.g. push delivery) is its own, not the task's.
      try {
        o.stored?.(live.task, live.owner, item);
      } catch (err) {
        this.deps.logger.error({ err, taskId: live.task.id }, 'task event observer failed');
      }
    }
  }

  /**
   * Another process finished the task while a turn runs here (seen by the log follower or at the
   * next event's store): the turn stops quietly and its listeners get the stored final status.
   */
  async overtaken(live: LiveTask): Promise<void> {
    if (live.overtaken) return;
    const stored = await this.deps.tasks.get(live.task.id);
    if (stored && isTerminal(stored.task.status.state)) this.adoptEnd(live, stored);
  }

  private adoptEnd(live: LiveTask, stored: StoredTask): void {
    if (live.overtaken) return;
    const { id: taskId, contextId } = live.task;
    live.overtaken = true;
    Object.assign(live.task, stored.task);
    live.seq = Math.max(live.seq, stored.seq);
    live.abort.abort(new AppError('INVALID_STATE', `task ${taskId} was finished by another process`));
    const item: StreamItem = {
      seq: stored.seq,
      payload: { statusUpdate: { taskId, contextId, status: stored.task.status } },
    };
    for (const l of [...live.listeners]) l(item);
    this.deps.logger.info({ taskId, state: stored.task.status.state }, 'task finished by another process');
  }

  /**
   * Another process wrote this task's next event (local mode: each CLI call runs its own agent),
   * or settled the task so that the database refused this one (fencing).
   * When it finished the task, a turn here stops quietly and its listeners get the stored final
   * status. When no turn runs here (e.g. this process only cancels), this status is written again
   * after the other's events. Anything else is a failure as before.
   */
  private async yieldTo(live: LiveTask, ev: TaskEvent, err: unknown): Promise<void> {
    if (live.overtaken) return;
    const stored = await this.deps.tasks.get(live.task.id);
    if (stored && isTerminal(stored.task.status.state)) return this.adoptEnd(live, stored);
    const { id: taskId } = live.task;
    if (stored && live.running === 0 && ev.kind === 'status' && (live.rebases = (live.rebases ?? 0) + 1) <= 5) {
      Object.assign(live.task, stored.task);
      live.seq = stored.seq;
      const again: TaskEvent = { seq: ++live.seq, kind: 'status', event: ev.event };
      applyEvent(live.task, again);
      try {
        await this.deps.tasks.append(taskId, again, viewTask(live.task, { copy: false }));
      } catch (e) {
        if (isSeqTaken(e) || isFencedOff(e)) return this.yieldTo(live, again, e);
        live.failure ??= e;
        throw e;
      }
      this.deliver(live, toItem(again));
      return;
    }
    live.failure ??= err;
    throw err;
  }
}

/** The store refused an event because its sequence number is taken: someone else wrote it. */
function isSeqTaken(err: unknown): boolean {
  return err instanceof AppError && err.reason === 'INVALID_STATE' && typeof err.details['seq'] === 'number';
}

/** The store refused an event by fencing: the task has ended, or another process runs it now. */
function isFencedOff(err: unknown): boolean {
  return err instanceof AppError && err.reason === 'INVALID_STATE' && err.details['fenced'] === true;
}

/**
 * A storage failure in the middle of a turn, as its callers are told it: the events before this
 * one are stored, so "nothing was changed" (what the store says of a single write) would be false.
 * The turn's runner settles the task once storage is back (TurnRunner.settleLost). The correlation
 * id stays, so the failure is still known as logged.
 */
function storedUpTo(taskId: string, seq: number, err: unknown): unknown {
  if (!(err instanceof AppError) || err.reason !== 'UNAVAILABLE') return err;
  const problem = err.message.replace(/; nothing was changed by this request$/, '');
  const stored =
    seq > 1
      ? `its events up to ${seq - 1} are stored, event ${seq} and those after it may not be`
      : `event ${seq} and those after it may not be stored`;
  return new AppError(
    'UNAVAILABLE',
    `${problem} (during a turn of task ${taskId}: ${stored}; the task ends FAILED once storage is back)`,
    { details: { ...err.details, taskId }, hint: err.hint, cause: err },
  );
}
