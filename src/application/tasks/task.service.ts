import {
  applyEvent,
  isInterrupted,
  isTerminal,
  type Artifact,
  type Message,
  type StreamResponse,
  type Task,
  type TaskEvent,
  type TaskPushNotificationConfig,
  type TaskState,
} from '../../domain/a2a.model.js';
import { AppError } from '../../domain/errors.js';
import { checkMessageLimits, DEFAULT_LIMITS, type PayloadLimits } from '../../domain/limits.js';
import { newId } from '../../domain/ids.js';
import type { Actor, ActorCatalog, ActorTurn, ArtifactOptions, StatusExtra } from '../ports/actor.port.js';
import type { Principal } from '../ports/principal.js';
import type { MessageKey, TaskRepository } from '../ports/task.repository.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { SessionService } from '../sessions/session.service.js';
import { Channel } from '../../domain/async-channel.js';
import { TaskLogFollower } from './task-log.follower.js';
import { decodeCursor, encodeCursor, viewTask } from './task-view.js';
import { messageFingerprint } from './message-fingerprint.js';

/** One item of a task stream, with the task's event sequence number it reflects. */
export interface StreamItem {
  seq: number;
  payload: StreamResponse;
}

export interface SendInput {
  message: Message;
  configuration?:
    | {
        historyLength?: number | undefined;
        returnImmediately?: boolean | undefined;
        taskPushNotificationConfig?: TaskPushNotificationConfig | undefined;
        acceptedOutputModes?: string[] | undefined;
      }
    | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export type SendResult = { task: Task } | { message: Message };

export interface ListInput {
  contextId?: string | undefined;
  status?: TaskState | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  historyLength?: number | undefined;
  statusTimestampAfter?: string | undefined;
  includeArtifacts?: boolean | undefined;
}

export interface ListResult {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** Work a service runs itself as a turn of a task it owns (a plan phase); reports like an actor turn. */
export type OwnedRun = (turn: ActorTurn) => Promise<void>;

/**
 * A service that owns some contexts (plans): nothing sent there reaches an actor. A message without
 * taskId is refused; a message on one of its tasks goes to `onInput`, which checks it (owner, state)
 * and returns the run that continues the task — or throws, and nothing is stored.
 */
export interface ContextOwner {
  /** What owns the context, in words for messages (e.g. "a plan"), or undefined when not this owner. */
  ownerOf(contextId: string): Promise<string | undefined>;
  onInput(task: Readonly<Task>, message: Message, principal: Principal): Promise<OwnedRun>;
}

/**
 * Registers the push config given inline with a send (`configuration.taskPushNotificationConfig`):
 * `prepare` validates it (throwing INVALID_PARAMS before anything is stored) and returns the write
 * that stores it, which the task service issues together with the task's creation, before the turn
 * can produce an event.
 */
export interface InlinePushRegistrar {
  prepare(taskId: string, config: TaskPushNotificationConfig, principal: Principal): () => Promise<void>;
}

/** What accept() found: a message already sent (a retry), to be answered from its task. */
interface Replay {
  replay: string;
}

type Accepted =
  | { direct: Message }
  | Replay
  | { live: LiveTask; actor: Actor; message: Message; isFollowUp: boolean; created?: Promise<void> };

/** Observes every event of every task after it is stored (push notifications use this). */
export type TaskEventTap = (task: Task, owner: string, item: StreamItem) => void;

interface LiveTask {
  task: Task;
  owner: string;
  seq: number;
  listeners: Set<(item: StreamItem) => void>;
  /** Persistence then broadcast, strictly in event order. */
  chain: Promise<void>;
  /** Events recorded but not yet stored and delivered (how far the actor runs ahead). */
  backlog: number;
  /** Set once storing an event failed: the actor learns it at its next event. */
  failure?: unknown;
  /** The failure has been answered to a caller or logged: it is not logged again. */
  failureReported?: boolean;
  /** Actor turns, one after another. */
  turns: Promise<void>;
  running: number;
  abort: AbortController;
  turnEndWaiters: Set<() => void>;
}

export interface TaskServiceDeps {
  tasks: TaskRepository;
  sessions: SessionService;
  actors: ActorCatalog;
  logger: Logger;
  now?: () => Date;
  /** What a client may send (defaults: DEFAULT_LIMITS). */
  limits?: PayloadLimits | undefined;
}

const DEFAULT_PAGE_SIZE = 50;
/** How many of its events an actor may have in flight to storage before it waits for them. */
const MAX_UNSTORED_EVENTS = 64;

/**
 * Tasks: the A2A send/stream/get/list/cancel/subscribe semantics over the task store. Tasks that
 * have a running actor turn or a subscriber are held in memory; every event is stored before it is
 * delivered, so a reader never sees what a restart would lose.
 */
export class TaskService {
  private readonly live = new Map<string, LiveTask>();
  private readonly loading = new Map<string, Promise<LiveTask>>();
  private readonly taps: TaskEventTap[] = [];
  private readonly owners: ContextOwner[] = [];
  private readonly recordingTaps: Array<(taskId: string, item: StreamItem) => void> = [];
  /** Reads the log for tasks another process may be running (see follow()). */
  private readonly follower: TaskLogFollower;
  private readonly now: () => Date;
  /** Sends in progress per message key, so a concurrent retry waits for the first one's task. */
  private readonly claims = new Map<string, Promise<void>>();
  private inlinePush: InlinePushRegistrar | undefined;

  constructor(private readonly deps: TaskServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.follower = new TaskLogFollower(deps.tasks, deps.logger);
  }

  /** Registers an observer of every stored event. */
  tap(observer: TaskEventTap): void {
    this.taps.push(observer);
  }

  /**
   * Registers an observer called when an event is handed to storage (before it is stored): a
   * write it issues at once joins the event's own group commit (the push outbox uses this).
   */
  tapRecording(observer: (taskId: string, item: StreamItem) => void): void {
    this.recordingTaps.push(observer);
  }

  /** Tasks currently held in memory (running or watched). */
  /** Whether a task has a running turn or a subscriber here (retention never deletes it). */
  isLive(id: string): boolean {
    return this.live.has(id) || this.loading.has(id);
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Takes the inline push configs of sends (wired once by the facade). */
  acceptInlinePush(registrar: InlinePushRegistrar): void {
    this.inlinePush = registrar;
  }

  /**
   * Idempotent on (principal, messageId): a retry of a message already sent answers from the task
   * it started (waiting for it to settle, unless returnImmediately) and starts no turn; the same
   * id with other content is refused. Keys live as long as their task.
   */
  async send(input: SendInput, principal: Principal): Promise<SendResult> {
    const accepted = await this.acceptOrReplay(input, principal);
    if ('direct' in accepted) return { message: accepted.direct };
    if ('replay' in accepted) return this.replaySend(accepted.replay, input, principal);
    const { live, actor, message, isFollowUp, created } = accepted;
    const settled = this.waitSettled(live);
    this.startTurn(live, actor, message, isFollowUp);
    const history = input.configuration?.historyLength;
    try {
      await created;
    } catch (err) {
      // Another process stored the same message first: answer from its task.
      if (isMessageKeyTaken(err)) return this.replaySend(await this.keyedTask(input, principal), input, principal);
      throw err;
    }
    if (input.configuration?.returnImmediately !== true) await settled;
    if (live.failure !== undefined) {
      // The turn ran but what it did was not stored: answering with it would report a state that
      // a reader (or a restart) will not find.
      live.failureReported = true;
      this.maybeRelease(live);
      throw live.failure;
    }
    const result = { task: viewTask(live.task, { historyLength: history }) };
    this.maybeRelease(live);
    return result;
  }

  /** Idempotent like {@link send}: a retry streams the original task (as it stands, then live events until it settles). */
  async stream(input: SendInput, principal: Principal): Promise<AsyncIterable<StreamItem>> {
    const accepted = await this.acceptOrReplay(input, principal);
    if ('direct' in accepted) {
      const ch = new Channel<StreamItem>();
      ch.push({ seq: 0, payload: { message: accepted.direct } });
      ch.end();
      return ch;
    }
    if ('replay' in accepted) return this.replayStream(accepted.replay, input, principal);
    const { live, actor, message, isFollowUp, created } = accepted;
    const ch = this.openChannel(live, { closeOnInterrupt: true, closeOnTurnEnd: true });
    ch.push({ seq: live.seq, payload: { task: viewTask(live.task, { historyLength: input.configuration?.historyLength }) } });
    this.startTurn(live, actor, message, isFollowUp);
    // Nobody reads the stream before the task row is stored.
    try {
      await created;
    } catch (err) {
      ch.return();
      if (isMessageKeyTaken(err)) return this.replayStream(await this.keyedTask(input, principal), input, principal);
      throw err;
    }
    return ch;
  }

  async get(id: string, historyLength: number | undefined, principal: Principal): Promise<Task> {
    const live = this.live.get(id);
    if (live) {
      this.assertOwner(live.owner, principal, id);
      return viewTask(live.task, { historyLength });
    }
    const stored = await this.deps.tasks.get(id);
    if (!stored) throw taskNotFound(id);
    this.assertOwner(stored.owner, principal, id);
    // Just loaded, so already a private copy.
    return viewTask(stored.task, { historyLength, copy: false });
  }

  async list(input: ListInput, principal: Principal): Promise<ListResult> {
    const limit = input.pageSize ?? DEFAULT_PAGE_SIZE;
    const page = await this.deps.tasks.list({
      owner: principal.id,
      contextId: input.contextId,
      state: input.status,
      updatedSince: input.statusTimestampAfter,
      limit,
      after: input.pageToken ? decodeCursor(input.pageToken) : undefined,
    });
    const tasks = page.tasks.map((s) => {
      const live = this.live.get(s.task.id)?.task;
      return viewTask(live ?? s.task, { historyLength: input.historyLength, includeArtifacts: input.includeArtifacts ?? false, copy: live !== undefined });
    });
    return {
      tasks,
      nextPageToken: page.next ? encodeCursor(page.next) : '',
      pageSize: tasks.length,
      totalSize: page.total,
    };
  }

  async cancel(id: string, principal: Principal): Promise<Task> {
    const live = await this.acquire(id, principal);
    try {
      if (isTerminal(live.task.status.state)) {
        throw new AppError('TASK_NOT_CANCELABLE', `Task ${id} is already ${stateWord(live.task.status.state)} and cannot be canceled`, {
          details: { taskId: id, state: live.task.status.state },
        });
      }
      live.abort.abort(new AppError('INVALID_STATE', 'task canceled'));
      await this.emitStatus(live, 'TASK_STATE_CANCELED', undefined, true);
      return viewTask(live.task);
    } finally {
      this.maybeRelease(live);
    }
  }

  /** A stream of one task's events: its current state first, or the logged events after `afterSeq`. */
  async subscribe(id: string, principal: Principal, afterSeq?: number): Promise<AsyncIterable<StreamItem>> {
    const live = await this.acquire(id, principal);
    const terminal = isTerminal(live.task.status.state);
    if (terminal && afterSeq === undefined) {
      this.maybeRelease(live);
      throw new AppError('UNSUPPORTED_OPERATION', `Task ${id} is ${stateWord(live.task.status.state)}; a finished task cannot be subscribed to`, {
        details: { taskId: id, state: live.task.status.state },
        hint: 'use GetTask to read its final state',
      });
    }
    const ch = this.openChannel(live, { closeOnInterrupt: false, closeOnTurnEnd: false });
    if (live.running === 0 && !terminal) this.follow(live);
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
    for (const live of [...this.live.values()]) {
      if (live.task.contextId !== contextId) continue;
      live.abort.abort();
      for (const l of live.listeners) l({ seq: live.seq, payload: { statusUpdate: { taskId: live.task.id, contextId, status: { state: 'TASK_STATE_CANCELED', timestamp: this.now().toISOString() } } } });
      live.listeners.clear();
      this.live.delete(live.task.id);
      await live.chain.catch(() => {});
    }
    return this.deps.tasks.deleteByContext(contextId);
  }

  // ---- tasks a service runs itself (plans) ----------------------------------------------------

  /** Lets a service own contexts: see ContextOwner. */
  addContextOwner(owner: ContextOwner): void {
    this.owners.push(owner);
  }

  /**
   * Starts a task in a context the caller's service owns and runs `run` as its turn, with the same
   * event recording, ordering and containment as an actor turn; no session, no actor. Returns the
   * task once stored (with `wait`, once it is settled: terminal, interrupted or the turn ended).
   */
  async startOwnedTask(input: { contextId: string; text: string; wait: boolean }, principal: Principal, run: OwnedRun): Promise<Task> {
    const taskId = newId();
    const message: Message = { messageId: newId(), role: 'ROLE_USER', contextId: input.contextId, taskId, parts: [{ text: input.text }] };
    const task: Task = { id: taskId, contextId: input.contextId, status: { state: 'TASK_STATE_SUBMITTED', timestamp: this.now().toISOString() }, history: [message] };
    const created = this.deps.tasks.create(task, principal.id);
    const live = this.register(task, principal.id, 0);
    live.chain = created;
    created.catch(() => {
      live.abort.abort();
      if (this.live.get(task.id) === live) this.live.delete(task.id);
    });
    const settled = this.waitSettled(live);
    this.startTurn(live, ownedActor(run), message, false);
    await created;
    if (input.wait) await settled;
    const view = viewTask(live.task, { historyLength: 0 });
    this.maybeRelease(live);
    return view;
  }

  /** A follow-up on a task of an owned context: the owner's run, or undefined for a chat task. */
  private async ownedInput(live: LiveTask, message: Message, principal: Principal): Promise<Actor | undefined> {
    try {
      for (const owner of this.owners) {
        if (await owner.ownerOf(live.task.contextId)) return ownedActor(await owner.onInput(live.task, message, principal));
      }
      return undefined;
    } catch (err) {
      this.maybeRelease(live);
      throw err;
    }
  }

  private async refuseOwnedContext(contextId: string | undefined): Promise<void> {
    if (!contextId) return;
    for (const owner of this.owners) {
      const what = await owner.ownerOf(contextId);
      if (what) {
        throw new AppError('UNSUPPORTED_OPERATION', `Context ${contextId} belongs to ${what} and takes no chat messages`, {
          details: { contextId },
          hint: 'answer a waiting request with message/send on its task (taskId), or use the agents plan commands',
        });
      }
    }
  }

  // ---- internals ---------------------------------------------------------------------------

  /**
   * accept(), unless the message was already sent: then the task it names. Sends of one message
   * key in this process run one after another (a retry waits until the first one's key is
   * stored); across processes the key's unique index decides (see send()).
   */
  private async acceptOrReplay(input: SendInput, principal: Principal): Promise<Accepted> {
    const incoming = input.message;
    // Before anything is stored (a session, the task row).
    checkMessageLimits(incoming, input.metadata, this.deps.limits ?? DEFAULT_LIMITS);
    if (incoming.role !== 'ROLE_USER') {
      throw new AppError('INVALID_PARAMS', 'A message sent to the agent must have role ROLE_USER', {
        fields: [{ field: 'message.role', description: 'must be ROLE_USER' }],
      });
    }
    const key: MessageKey = { owner: principal.id, messageId: incoming.messageId, hash: messageFingerprint(incoming) };
    const claim = `${key.owner}\u0000${key.messageId}`;
    const before = this.claims.get(claim);
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    this.claims.set(claim, mine);
    const done = (): void => {
      if (this.claims.get(claim) === mine) this.claims.delete(claim);
      release();
    };
    try {
      if (before) await before;
      const hit = await this.deps.tasks.findMessageKey(key.owner, key.messageId);
      if (hit) {
        done();
        if (hit.hash !== key.hash) throw messageIdReused(key.messageId);
        return { replay: hit.taskId };
      }
      const accepted = await this.accept(input, principal, key);
      if ('created' in accepted && accepted.created) accepted.created.then(done, done);
      else done();
      return accepted;
    } catch (err) {
      done();
      throw err;
    }
  }

  /** The task a message key names (after a concurrent send of the same message won the race). */
  private async keyedTask(input: SendInput, principal: Principal): Promise<string> {
    const hit = await this.deps.tasks.findMessageKey(principal.id, input.message.messageId);
    if (!hit) throw new AppError('INTERNAL', `message ${input.message.messageId} is recorded as sent but its task is missing`);
    if (hit.hash !== messageFingerprint(input.message)) throw messageIdReused(input.message.messageId);
    return hit.taskId;
  }

  /** A blocking retry waits for the task to settle as the first send did; returnImmediately answers at once. */
  private async replaySend(taskId: string, input: SendInput, principal: Principal): Promise<SendResult> {
    const live = await this.acquire(taskId, principal);
    try {
      const st = live.task.status.state;
      if (input.configuration?.returnImmediately !== true && !isTerminal(st) && !isInterrupted(st) && (await this.turnRuns(live))) {
        const settled = this.waitSettled(live);
        // Run by another process (local mode): its events come through the log.
        if (live.running === 0) this.follow(live);
        await settled;
      }
      return { task: viewTask(live.task, { historyLength: input.configuration?.historyLength }) };
    } finally {
      this.maybeRelease(live);
    }
  }

  /** A streaming retry: the task as it stands (its snapshot with every logged event), then live events until it settles. */
  private async replayStream(taskId: string, input: SendInput, principal: Principal): Promise<AsyncIterable<StreamItem>> {
    const live = await this.acquire(taskId, principal);
    const st = live.task.status.state;
    const runs = !isTerminal(st) && !isInterrupted(st) && (await this.turnRuns(live));
    const ch = this.openChannel(live, { closeOnInterrupt: true, closeOnTurnEnd: live.running > 0 });
    ch.push({ seq: live.seq, payload: { task: viewTask(live.task, { historyLength: input.configuration?.historyLength }) } });
    if (!runs) ch.end();
    else if (live.running === 0) this.follow(live);
    return ch;
  }

  /**
   * Whether a turn of the task runs, here or in another process. An actor may end its turn and
   * leave the task working: then the first send answered at the turn's end, and so does a resend.
   * (A turn whose process died is settled within a lease period, which ends a wait on it.)
   */
  private async turnRuns(live: LiveTask): Promise<boolean> {
    if (live.running > 0) return true;
    const stored = await this.deps.tasks.get(live.task.id);
    return stored?.runnerId !== undefined && stored.runnerId !== null;
  }

  private async accept(input: SendInput, principal: Principal, key: MessageKey): Promise<Accepted> {
    const incoming = input.message;
    const inlinePush = input.configuration?.taskPushNotificationConfig;
    if (incoming.taskId) {
      const live = await this.acquire(incoming.taskId, principal);
      const task = live.task;
      if (incoming.contextId && incoming.contextId !== task.contextId) {
        this.maybeRelease(live);
        throw new AppError('INVALID_PARAMS', `message.contextId ${incoming.contextId} does not match task ${task.id}'s context ${task.contextId}`, {
          fields: [{ field: 'message.contextId', description: 'must match the context of the referenced task' }],
        });
      }
      if (isTerminal(task.status.state)) {
        this.maybeRelease(live);
        throw new AppError('UNSUPPORTED_OPERATION', `Task ${task.id} is ${stateWord(task.status.state)} and accepts no further messages`, {
          details: { taskId: task.id, state: task.status.state },
          hint: 'send a new message without taskId to start a new task in the same context',
        });
      }
      const actor = (await this.ownedInput(live, incoming, principal)) ?? (await this.actorFor((await this.deps.sessions.find(task.contextId))?.actor));
      const message: Message = { ...incoming, taskId: task.id, contextId: task.contextId };
      let storePush: (() => Promise<void>) | undefined;
      try {
        storePush = inlinePush && this.preparePush(task.id, inlinePush, principal);
      } catch (err) {
        this.maybeRelease(live);
        throw err;
      }
      (task.history ??= []).push(message);
      const seq = live.seq;
      const saved = live.chain.then(() => this.deps.tasks.saveSnapshot(task, seq, key));
      // A key taken by a concurrent send leaves the task as it was; other failures stop the task.
      live.chain = saved.catch((err: unknown) => {
        if (!isMessageKeyTaken(err)) throw err;
      });
      try {
        await saved;
        if (storePush) await storePush();
      } catch (err) {
        if (isMessageKeyTaken(err)) {
          task.history?.splice(task.history.indexOf(message), 1);
          this.maybeRelease(live);
          return { replay: await this.keyedTask(input, principal) };
        }
        // The caller gets the failure; the task is dropped from memory, so the next reader sees
        // what is stored (without the message that was not).
        live.failureReported = true;
        this.maybeRelease(live);
        throw err;
      }
      return { live, actor, message, isFollowUp: true };
    }

    await this.refuseOwnedContext(incoming.contextId);
    const { session, stored: sessionStored } = await this.deps.sessions.resolveForMessage(incoming.contextId, principal);
    const actor = await this.actorFor(session.actor);
    const message: Message = { ...incoming, contextId: session.id };
    const direct = actor.reply?.(message);
    if (direct) {
      await sessionStored;
      return { direct: { ...direct, contextId: session.id } };
    }

    const taskId = newId();
    const stamped: Message = { ...message, taskId };
    const task: Task = {
      id: taskId,
      contextId: session.id,
      status: { state: 'TASK_STATE_SUBMITTED', timestamp: this.now().toISOString() },
      history: [stamped],
    };
    if (input.metadata && Object.keys(input.metadata).length > 0) task.metadata = input.metadata;
    const storePush = inlinePush && this.preparePush(taskId, inlinePush, principal);
    // The task row (and a new session's, the message key and an inline push config) is stored in
    // the same group commit as the first events of the turn: the turn may start at once, because
    // every delivery waits behind the rows (the chain starts with them) and callers answer only
    // after they are stored (`created`).
    const created = Promise.all([
      sessionStored,
      this.deps.tasks.create(task, principal.id, key),
      this.deps.sessions.recordTask(session.id, task.status.timestamp ?? this.now().toISOString()),
      storePush?.(),
    ]).then(() => undefined);
    const live = this.register(task, principal.id, 0);
    live.chain = created;
    created.catch(() => {
      // The caller of send/stream gets this failure (and the dispatcher logs it).
      live.failureReported = true;
      live.abort.abort();
      if (this.live.get(task.id) === live) this.live.delete(task.id);
    });
    return { live, actor, message: stamped, isFollowUp: false, created };
  }

  private preparePush(taskId: string, config: TaskPushNotificationConfig, principal: Principal): () => Promise<void> {
    if (!this.inlinePush) throw new AppError('PUSH_NOT_SUPPORTED', 'Push notifications are not supported by this agent');
    return this.inlinePush.prepare(taskId, config, principal);
  }

  private async actorFor(name: string | undefined): Promise<Actor> {
    const actor = await this.deps.actors.resolve(name ?? this.deps.sessions.defaultActor);
    if (!actor) throw new AppError('INVALID_STATE', `The actor ${name ?? this.deps.sessions.defaultActor} of this session no longer exists`, { hint: 'start a new session with `agents session create --actor …`' });
    return actor;
  }

  private startTurn(live: LiveTask, actor: Actor, message: Message, isFollowUp: boolean): void {
    this.unfollow(live);
    live.running++;
    const turn: ActorTurn = {
      task: live.task,
      message,
      isFollowUp,
      signal: live.abort.signal,
      status: (state, text, extra) => this.paced(live, this.emitStatus(live, state, text, false, extra)),
      artifact: (artifact, opts) => this.paced(live, this.emitArtifact(live, artifact, opts)),
    };
    live.turns = live.turns
      .then(async () => {
        if (isTerminal(live.task.status.state)) return;
        try {
          await actor.handle(turn);
        } catch (err) {
          if (live.abort.signal.aborted || live.failure !== undefined) return;
          this.deps.logger.error({ err, taskId: live.task.id, actor: actor.name }, 'actor failed');
          // A failure to store this is the chain's, reported below.
          await this.emitStatus(live, 'TASK_STATE_FAILED', `The actor ${actor.name} failed: ${errorText(err)}`).catch(() => {});
        }
      })
      .catch((err: unknown) => this.deps.logger.error({ err, taskId: live.task.id }, 'actor turn failed'))
      .finally(async () => {
        // A failed store has already stopped delivery (and reached the actor); the turn still ends.
        await live.chain.catch((err: unknown) => {
          if (live.failureReported || isReported(err)) return;
          live.failureReported = true;
          this.deps.logger.error({ err, taskId: live.task.id }, 'storing the task failed');
        });
        // Left open by its actor and no other turn queued: nothing runs it now (see settleStranded).
        if (live.running === 1 && isRunningState(live.task.status.state)) {
          await this.deps.tasks.endTurn(live.task.id).catch((err: unknown) => this.deps.logger.warn({ err, taskId: live.task.id }, 'recording the end of a turn failed'));
        }
        live.running--;
        for (const w of [...live.turnEndWaiters]) w();
        this.maybeRelease(live);
      })
      // Nothing above throws; a turn must never leave a rejection behind all the same.
      .catch(() => {});
  }

  /** Resolves once the task is terminal or interrupted, or the current turn ends. */
  private waitSettled(live: LiveTask): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        live.listeners.delete(listener);
        live.turnEndWaiters.delete(done);
        resolve();
      };
      const listener = (item: StreamItem): void => {
        const st = 'statusUpdate' in item.payload ? item.payload.statusUpdate.status.state : undefined;
        if (st && (isTerminal(st) || isInterrupted(st))) done();
      };
      live.listeners.add(listener);
      live.turnEndWaiters.add(done);
    });
  }

  private openChannel(live: LiveTask, opts: { closeOnInterrupt: boolean; closeOnTurnEnd: boolean }): Channel<StreamItem> {
    // A turn whose events could not be stored ends its stream with that error, not silently.
    const onTurnEnd = (): void => (live.failure !== undefined ? ch.fail(live.failure) : ch.end());
    const listener = (item: StreamItem): void => {
      ch.push(item);
      const st = 'statusUpdate' in item.payload ? item.payload.statusUpdate.status.state : undefined;
      if (st && (isTerminal(st) || (opts.closeOnInterrupt && isInterrupted(st)))) ch.end();
    };
    const ch: Channel<StreamItem> = new Channel<StreamItem>(() => {
      live.listeners.delete(listener);
      live.turnEndWaiters.delete(onTurnEnd);
      this.maybeRelease(live);
    });
    live.listeners.add(listener);
    if (opts.closeOnTurnEnd) live.turnEndWaiters.add(onTurnEnd);
    return ch;
  }

  private emitStatus(live: LiveTask, state: TaskState, text?: string, force = false, extra: StatusExtra = {}): Promise<void> {
    if (isTerminal(live.task.status.state)) return live.chain;
    if (!force && live.abort.signal.aborted) return live.chain;
    const { id: taskId, contextId } = live.task;
    const status: Task['status'] = { state, timestamp: this.now().toISOString() };
    if (text !== undefined || extra.data !== undefined) {
      const parts: Message['parts'] = [];
      if (text !== undefined) parts.push({ text });
      if (extra.data !== undefined) parts.push({ data: extra.data, mediaType: 'application/json' });
      const message: Message = { messageId: newId(), role: 'ROLE_AGENT', parts, taskId, contextId };
      status.message = message;
      (live.task.history ??= []).push(message);
    }
    const event: TaskEvent = { seq: ++live.seq, kind: 'status', event: { taskId, contextId, status } };
    if (extra.metadata) event.event.metadata = extra.metadata;
    return this.record(live, event);
  }

  /** Ends a task that nothing runs any more (e.g. its server was killed mid-turn) as failed. */
  async fail(id: string, text: string, principal: Principal): Promise<void> {
    const live = await this.acquire(id, principal);
    try {
      if (isTerminal(live.task.status.state)) return;
      live.abort.abort();
      await this.emitStatus(live, 'TASK_STATE_FAILED', text, true);
    } finally {
      this.maybeRelease(live);
    }
  }

  /**
   * Ends as FAILED (with `text` as the status message) every task still submitted or working
   * that no live process runs: not a turn of this process, and its runner is not live. Its
   * subscribers — here, or following the log elsewhere — get the final event. Returns the ids.
   */
  async settleStranded(isLive: (runnerId: string) => Promise<boolean>, text: string): Promise<string[]> {
    const settled: string[] = [];
    for (const t of await this.deps.tasks.listRunning()) {
      if ((this.live.get(t.id)?.running ?? 0) > 0) continue;
      if (await isLive(t.runnerId)) continue;
      try {
        // The platform acts for the task's owner here.
        if (await this.failStranded(t.id, { id: t.owner, kind: 'token', roles: {} }, text)) settled.push(t.id);
      } catch (err) {
        // E.g. another process settled it at the same moment (its event took the sequence number).
        this.deps.logger.warn({ err, taskId: t.id }, 'settling a stranded task failed');
      }
    }
    return settled;
  }

  /** True when no live process runs the task any more (or it is gone): what it left behind is nobody's. */
  async isStranded(taskId: string, isLive: (runnerId: string | null) => Promise<boolean>): Promise<boolean> {
    if ((this.live.get(taskId)?.running ?? 0) > 0) return false;
    const stored = await this.deps.tasks.get(taskId);
    return !stored || !(await isLive(stored.runnerId ?? null));
  }

  /**
   * A graceful stop: lets the running turns finish for up to `deadlineMs`, then ends those still
   * running as FAILED with `text` (blocked senders and streams get that final state). Returns how
   * many had to be ended.
   */
  async drainTurns(deadlineMs: number, text: string): Promise<number> {
    const running = (): LiveTask[] => [...this.live.values()].filter((l) => l.running > 0);
    const first = running();
    if (first.length > 0 && deadlineMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(first.map((l) => l.turns)),
        new Promise<void>((r) => {
          timer = setTimeout(r, deadlineMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
    const left = running();
    for (const live of left) {
      live.abort.abort(new AppError('UNAVAILABLE', text));
      await this.emitStatus(live, 'TASK_STATE_FAILED', text, true).catch((err: unknown) => this.deps.logger.error({ err, taskId: live.task.id }, 'settling a task at shutdown failed'));
    }
    return left.length;
  }

  private async failStranded(id: string, owner: Principal, text: string): Promise<boolean> {
    const live = await this.acquire(id, owner);
    try {
      const st = live.task.status.state;
      if (isTerminal(st) || isInterrupted(st) || live.running > 0) return false;
      live.abort.abort();
      await this.emitStatus(live, 'TASK_STATE_FAILED', text, true);
      return true;
    } finally {
      this.maybeRelease(live);
    }
  }

  private emitArtifact(live: LiveTask, artifact: Artifact, opts: ArtifactOptions = {}): Promise<void> {
    if (isTerminal(live.task.status.state) || live.abort.signal.aborted) return live.chain;
    const { id: taskId, contextId } = live.task;
    const event: TaskEvent = { seq: ++live.seq, kind: 'artifact', event: { taskId, contextId, artifact, ...opts } };
    return this.record(live, event);
  }

  /** Applies, stores, then delivers one event, after every event before it. */
  private record(live: LiveTask, ev: TaskEvent): Promise<void> {
    applyEvent(live.task, ev);
    // A status event rewrites the stored snapshot when it adds to the history or settles the task;
    // a plain progress state only moves the listing columns (reading the task folds it back in).
    const status = ev.kind === 'status' ? ev.event.status : undefined;
    const settles = status && (status.message !== undefined || isTerminal(status.state) || isInterrupted(status.state));
    // The repository reads the snapshot during the call only (see TaskRepository.append): no copy.
    const snapshot = settles ? viewTask(live.task, { copy: false }) : undefined;
    const item = toItem(ev);
    // Storing starts now, in event order (the repository applies writes in the order they are
    // asked for), so a burst of events shares one group commit; delivery still waits for each
    // event to be stored, strictly in order. The session's activity moves with the snapshot
    // (history or a settled turn), not with every progress state.
    const appended = this.deps.tasks.append(live.task.id, ev, snapshot);
    for (const t of this.recordingTaps) t(live.task.id, item);
    const stored: Promise<unknown> = snapshot ? Promise.all([appended, this.deps.sessions.recordActivity(live.task.contextId, status?.timestamp ?? '')]) : appended;
    stored.catch(() => {}); // observed through the chain below
    live.backlog++;
    live.chain = live.chain
      .then(() => stored)
      .then(
        () => {
          live.backlog--;
          for (const l of [...live.listeners]) l(item);
          for (const t of this.taps) {
            // An observer's failure (e.g. push delivery) is its own, not the task's.
            try {
              t(live.task, live.owner, item);
            } catch (err) {
              this.deps.logger.error({ err, taskId: live.task.id }, 'task event observer failed');
            }
          }
        },
        (err: unknown) => {
          live.backlog--;
          live.failure ??= err;
          throw err;
        },
      );
    return live.chain;
  }

  /**
   * What an actor waits for after an event: nothing while few of its events are still being
   * stored, so a burst is stored and sent in one go; once too many are, until they all are.
   */
  private paced(live: LiveTask, recorded: Promise<void>): Promise<void> {
    if (live.failure !== undefined) return Promise.reject(live.failure);
    if (live.backlog < MAX_UNSTORED_EVENTS) {
      recorded.catch(() => {}); // the actor learns of a failure at its next event
      return Promise.resolve();
    }
    return recorded;
  }

  private register(task: Task, owner: string, seq: number): LiveTask {
    const live: LiveTask = {
      task,
      owner,
      seq,
      listeners: new Set(),
      chain: Promise.resolve(),
      backlog: 0,
      turns: Promise.resolve(),
      running: 0,
      abort: new AbortController(),
      turnEndWaiters: new Set(),
    };
    this.live.set(task.id, live);
    return live;
  }

  /** The in-memory task, loading it from the store when needed; checks the caller may see it. */
  private async acquire(id: string, principal: Principal): Promise<LiveTask> {
    let live = this.live.get(id);
    if (!live) {
      let pending = this.loading.get(id);
      if (!pending) {
        pending = this.deps.tasks.get(id).then((stored) => {
          if (!stored) throw taskNotFound(id);
          return this.live.get(id) ?? this.register(stored.task, stored.owner, stored.seq);
        });
        this.loading.set(id, pending);
        pending.then(
          () => this.loading.delete(id),
          () => this.loading.delete(id),
        );
      }
      live = await pending;
    }
    this.assertOwner(live.owner, principal, id);
    return live;
  }

  /**
   * Local mode runs one agent per CLI call over the same database: a task watched here may be run
   * by another process. Until a turn runs here, new events are read from the log and delivered.
   */
  private follow(live: LiveTask): void {
    this.follower.follow(live.task.id, {
      after: () => live.seq,
      apply: (events) => {
        for (const ev of events) {
          if (ev.seq <= live.seq || live.running > 0) continue;
          applyEvent(live.task, ev);
          live.seq = ev.seq;
          const item = toItem(ev);
          for (const l of [...live.listeners]) l(item);
        }
        return !isTerminal(live.task.status.state) && live.listeners.size > 0;
      },
    });
  }

  private unfollow(live: LiveTask): void {
    this.follower.unfollow(live.task.id);
  }

  private maybeRelease(live: LiveTask): void {
    if (live.listeners.size > 0 || live.running > 0) return;
    const release = (): void => {
      if (live.listeners.size === 0 && live.running === 0 && this.live.get(live.task.id) === live) {
        this.unfollow(live);
        this.live.delete(live.task.id);
      }
    };
    // After a failed store too: the next caller then reads what the store really holds.
    void live.chain.then(release, release);
  }

  private assertOwner(owner: string, principal: Principal, id: string): void {
    // Another principal's task is indistinguishable from a missing one.
    if (owner !== principal.id) throw taskNotFound(id);
  }
}

/** A service's run in the shape of an actor, so that it runs as a turn like any other. */
function ownedActor(run: OwnedRun): Actor {
  return { name: 'task owner', description: 'a turn run by the service that owns the task', handle: run };
}

function toItem(ev: TaskEvent): StreamItem {
  return ev.kind === 'status'
    ? { seq: ev.seq, payload: { statusUpdate: ev.event } }
    : { seq: ev.seq, payload: { artifactUpdate: ev.event } };
}

function isRunningState(s: TaskState): boolean {
  return s === 'TASK_STATE_SUBMITTED' || s === 'TASK_STATE_WORKING';
}

function messageIdReused(messageId: string): AppError {
  return new AppError('INVALID_PARAMS', `messageId ${messageId} was already used with different content; a retry must resend the same message, a new message needs a new messageId`, {
    fields: [{ field: 'message.messageId', description: 'already used for a message with different parts, metadata, contextId or taskId' }],
    details: { messageId },
  });
}

function isMessageKeyTaken(err: unknown): boolean {
  return err instanceof AppError && err.reason === 'ALREADY_EXISTS' && typeof err.details['messageId'] === 'string';
}

function taskNotFound(id: string): AppError {
  return new AppError('TASK_NOT_FOUND', `Task ${id} was not found`, { details: { taskId: id }, hint: 'list your tasks with ListTasks (agents task list)' });
}

function stateWord(s: TaskState): string {
  return s.replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}

/** A storage failure the store has already logged, with the correlation id its callers get. */
function isReported(err: unknown): boolean {
  return err instanceof AppError && err.reason === 'UNAVAILABLE' && typeof err.details['correlationId'] === 'string';
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
