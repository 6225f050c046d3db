import { isTerminal, type Task, type TaskState } from '../../domain/a2a.model.ts';
import { Channel } from '../../domain/async-channel.ts';
import { AppError } from '../../domain/errors.ts';
import { decodeUpdateCursor, encodeUpdateCursor } from '../../domain/paging.ts';
import { JsonText } from '../../domain/json.ts';
import { LAST_REF, resolveRef } from '../id-refs.ts';
import type { Principal } from '../ports/principal.ts';
import type { TaskRef, TaskRepository } from '../ports/task.repository.port.ts';
import { toItem, type LiveTasks } from './live-tasks.service.ts';
import type { MessageIntake } from './message-intake.service.ts';
import type { OwnedTasks } from './owned-tasks.service.ts';
import type { SendReplay } from './send-replay.service.ts';
import type { StrandedTasks } from './stranded-tasks.service.ts';
import { assertOwner, isMessageKeyTaken, stateWord, taskNotFound } from './task.errors.ts';
import type { TaskEventRecorder } from './task-event.recorder.ts';
import { viewTask } from './task.views.ts';
import type { ListInput, ListResult, OwnedRun, SendInput, SendResult, StreamItem } from './task.types.ts';
import type { TurnRunner } from './turn-runner.service.ts';

export type {
  ContextOwner,
  InlinePushRegistrar,
  ListInput,
  ListResult,
  OwnedRun,
  SendInput,
  SendResult,
  StreamItem,
  TaskEventObserver,
} from './task.types.ts';

/**
 * The parts a task service is made of, built by the composition root (which hands each part to
 * whoever needs it alone: the push notifier observes the recorder, retention asks LiveTasks,
 * stopping drains the TurnRunner, recovery asks StrandedTasks, plans register with OwnedTasks).
 */
export interface TaskServiceDeps {
  tasks: TaskRepository;
  live: LiveTasks;
  recorder: TaskEventRecorder;
  turns: TurnRunner;
  owned: OwnedTasks;
  intake: MessageIntake;
  replay: SendReplay;
  stranded: StrandedTasks;
  now: () => Date;
}

const DEFAULT_PAGE_SIZE = 50;

/**
 * Tasks: the A2A send/stream/get/list/cancel/subscribe semantics over the task store. Tasks that
 * have a running actor turn or a subscriber are held in memory (LiveTasks); every event is stored
 * before it is delivered (TaskEventRecorder), so a reader never sees what a restart would lose.
 */
export class TaskService {
  private readonly now: () => Date;
  private readonly live: LiveTasks;
  private readonly recorder: TaskEventRecorder;
  private readonly turns: TurnRunner;
  private readonly owned: OwnedTasks;
  private readonly intake: MessageIntake;
  private readonly replay: SendReplay;
  private readonly stranded: StrandedTasks;

  private readonly deps: TaskServiceDeps;

  constructor(deps: TaskServiceDeps) {
    this.deps = deps;
    this.now = deps.now;
    this.live = deps.live;
    this.recorder = deps.recorder;
    this.turns = deps.turns;
    this.owned = deps.owned;
    this.intake = deps.intake;
    this.replay = deps.replay;
    this.stranded = deps.stranded;
  }

  /** Tasks currently held in memory (running or watched). */
  get liveCount(): number {
    return this.live.size;
  }

  /**
   * Idempotent on (principal, messageId): a retry of a message already sent answers from the task
   * it started (waiting for it to settle, unless returnImmediately) and starts no turn; the same
   * id with other content is refused. Keys live as long as their task.
   */
  async send(input: SendInput, principal: Principal): Promise<SendResult> {
    const accepted = await this.intake.acceptOrReplay(input, principal);
    if ('direct' in accepted) return { message: accepted.direct };
    if ('replay' in accepted) return this.replay.send(accepted.replay, input, principal);
    const { live, actor, message, isFollowUp, opensSession, created } = accepted;
    const settled = this.live.waitSettled(live);
    this.turns.start(live, actor, message, isFollowUp, opensSession, principal.id);
    const history = input.configuration?.historyLength;
    try {
      await created;
    } catch (err) {
      // Another process stored the same message first: answer from its task.
      if (isMessageKeyTaken(err))
        return this.replay.send(await this.intake.keyedTask(input, principal), input, principal);
      throw err;
    }
    if (input.configuration?.returnImmediately !== true) await settled;
    if (live.failure !== undefined) {
      // The turn ran but what it did was not stored: answering with it would report a state that
      // a reader (or a restart) will not find.
      live.failureReported = true;
      this.live.release(live);
      throw live.failure as unknown;
    }
    const result = { task: viewTask(live.task, { historyLength: history }) };
    this.live.release(live);
    return result;
  }

  /** Idempotent like {@link send}: a retry streams the original task (as it stands, then live events until it settles). */
  async stream(input: SendInput, principal: Principal): Promise<AsyncIterable<StreamItem>> {
    const accepted = await this.intake.acceptOrReplay(input, principal);
    if ('direct' in accepted) {
      const ch = new Channel<StreamItem>();
      ch.push({ seq: 0, payload: { message: accepted.direct } });
      ch.end();
      return ch;
    }
    if ('replay' in accepted) return this.replay.stream(accepted.replay, input, principal);
    const { live, actor, message, isFollowUp, opensSession, created } = accepted;
    const ch = this.live.openChannel(live, { closeOnInterrupt: true, closeOnTurnEnd: true });
    ch.push({
      seq: live.seq,
      payload: { task: viewTask(live.task, { historyLength: input.configuration?.historyLength }) },
    });
    this.turns.start(live, actor, message, isFollowUp, opensSession, principal.id);
    // Nobody reads the stream before the task row is stored.
    try {
      await created;
    } catch (err) {
      void ch.return();
      if (isMessageKeyTaken(err))
        return this.replay.stream(await this.intake.keyedTask(input, principal), input, principal);
      throw err;
    }
    return ch;
  }

  async get(ref: string, historyLength: number | undefined, principal: Principal): Promise<Task> {
    const task = await this.getForClient(ref, historyLength, principal);
    return task instanceof JsonText ? task.value : task;
  }

  /**
   * Runs `use` with the task id `ref` names: the exact id first (no extra query on the usual
   * path), then `last` (the caller's most recently updated task) or a unique prefix of one of the
   * caller's task ids.
   */
  private async byRef<T>(ref: string, principal: Principal, use: (id: string) => Promise<T>): Promise<T> {
    if (ref !== LAST_REF) {
      try {
        return await use(ref);
      } catch (err) {
        if (!(err instanceof AppError && err.reason === 'TASK_NOT_FOUND')) throw err;
      }
    }
    const owner = principal.namespace;
    const found = await resolveRef<TaskRef>(ref, {
      kind: 'task',
      exact: () => Promise.resolve(undefined), // tried above
      latest: async () => {
        const task = (await this.deps.tasks.list({ owner, limit: 1 })).tasks[0]?.task;
        return (
          task && {
            id: task.id,
            contextId: task.contextId,
            state: task.status.state,
            updatedAt: task.status.timestamp ?? '',
          }
        );
      },
      byPrefix: (prefix, limit) => this.deps.tasks.refsByIdPrefix(owner, prefix, limit),
      idOf: (t) => t.id,
      describe: (t) => `${stateWord(t.state as TaskState)} · context ${t.contextId}`,
      notFound: taskNotFound,
    });
    return use(found.id);
  }

  /**
   * What GetTask answers. A stored task whose snapshot is already its view comes back as that JSON
   * text (see StoredTaskView), for a transport to send without parsing and serialising it again.
   */
  getForClient(ref: string, historyLength: number | undefined, principal: Principal): Promise<Task | JsonText<Task>> {
    return this.byRef(ref, principal, (id) => this.exactForClient(id, historyLength, principal));
  }

  private async exactForClient(
    id: string,
    historyLength: number | undefined,
    principal: Principal,
  ): Promise<Task | JsonText<Task>> {
    const live = this.live.get(id);
    if (live) {
      assertOwner(live.owner, principal, id);
      return viewTask(live.task, { historyLength });
    }
    const stored = historyLength === undefined ? await this.deps.tasks.getView(id) : await this.deps.tasks.get(id);
    if (!stored) throw taskNotFound(id);
    assertOwner(stored.owner, principal, id);
    if ('view' in stored) return stored.view;
    // Just loaded, so already a private copy.
    return viewTask(stored.task, { historyLength, copy: false });
  }

  async list(input: ListInput, principal: Principal): Promise<ListResult> {
    const limit = input.pageSize ?? DEFAULT_PAGE_SIZE;
    const page = await this.deps.tasks.list({
      owner: principal.namespace,
      contextId: input.contextId,
      state: input.status,
      updatedSince: input.statusTimestampAfter,
      limit,
      after: input.pageToken ? decodeUpdateCursor(input.pageToken) : undefined,
    });
    const tasks = page.tasks.map((s) => {
      const live = this.live.get(s.task.id)?.task;
      return viewTask(live ?? s.task, {
        historyLength: input.historyLength,
        includeArtifacts: input.includeArtifacts ?? false,
        copy: live !== undefined,
      });
    });
    return {
      tasks,
      nextPageToken: page.next ? encodeUpdateCursor(page.next) : '',
      pageSize: tasks.length,
      totalSize: page.total,
    };
  }

  cancel(ref: string, principal: Principal): Promise<Task> {
    return this.byRef(ref, principal, (id) => this.cancelExact(id, principal));
  }

  private async cancelExact(id: string, principal: Principal): Promise<Task> {
    const live = await this.live.acquire(id, principal);
    try {
      if (isTerminal(live.task.status.state)) {
        throw new AppError(
          'TASK_NOT_CANCELABLE',
          `Task ${id} is already ${stateWord(live.task.status.state)} and cannot be canceled`,
          {
            details: { taskId: id, state: live.task.status.state },
          },
        );
      }
      live.abort.abort(new AppError('INVALID_STATE', 'task canceled'));
      await this.recorder.status(live, 'TASK_STATE_CANCELED', undefined, true);
      return viewTask(live.task);
    } finally {
      this.live.release(live);
    }
  }

  /** A stream of one task's events: its current state first, or the logged events after `afterSeq`. */
  subscribe(ref: string, principal: Principal, afterSeq?: number): Promise<AsyncIterable<StreamItem>> {
    return this.byRef(ref, principal, (id) => this.subscribeExact(id, principal, afterSeq));
  }

  private async subscribeExact(
    id: string,
    principal: Principal,
    afterSeq?: number,
  ): Promise<AsyncIterable<StreamItem>> {
    const live = await this.live.acquire(id, principal);
    const terminal = isTerminal(live.task.status.state);
    if (terminal && afterSeq === undefined) {
      this.live.release(live);
      throw new AppError(
        'UNSUPPORTED_OPERATION',
        `Task ${id} is ${stateWord(live.task.status.state)}; a finished task cannot be subscribed to`,
        {
          details: { taskId: id, state: live.task.status.state },
          hint: 'use GetTask to read its final state',
        },
      );
    }
    const ch = this.live.openChannel(live, { closeOnInterrupt: false, closeOnTurnEnd: false });
    if (live.running === 0 && !terminal) this.live.follow(live);
    if (afterSeq === undefined) {
      ch.push({ seq: live.seq, payload: { task: viewTask(live.task) } });
    } else {
      // Replay from the log up to the live position; new events queue behind it in the channel.
      const upTo = live.seq;
      for (const ev of await this.deps.tasks.eventsAfter(id, afterSeq)) {
        if (ev.seq > upTo) break;
        ch.push(toItem(ev));
      }
      if (terminal) ch.end();
    }
    return ch;
  }

  /** Cancels what runs in a context and deletes its tasks (used when a session is deleted). */
  async purgeContext(contextId: string): Promise<number> {
    for (const live of this.live.all()) {
      if (live.task.contextId !== contextId) continue;
      live.abort.abort();
      for (const l of live.listeners)
        l({
          seq: live.seq,
          payload: {
            statusUpdate: {
              taskId: live.task.id,
              contextId,
              status: { state: 'TASK_STATE_CANCELED', timestamp: this.now().toISOString() },
            },
          },
        });
      live.listeners.clear();
      this.live.drop(live);
      await live.chain.catch(() => {});
    }
    return this.deps.tasks.deleteByContext(contextId);
  }

  // ---- tasks a service runs itself (plans) ----------------------------------------------------

  /**
   * Starts a task in a context the caller's service owns and runs `run` as its turn, with the same
   * event recording, ordering and containment as an actor turn; no session, no actor. Returns the
   * task once stored (with `wait`, once it is settled: terminal, interrupted or the turn ended).
   */
  startOwnedTask(
    input: { contextId: string; text: string; wait: boolean },
    principal: Principal,
    run: OwnedRun,
  ): Promise<Task> {
    return this.owned.start(input, principal, run);
  }

  // ---- work that nothing runs any more --------------------------------------------------------

  /** Ends a task that nothing runs any more (e.g. its server was killed mid-turn) as failed. */
  fail(id: string, text: string, principal: Principal): Promise<void> {
    return this.stranded.fail(id, text, principal);
  }
}
