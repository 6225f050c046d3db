import {
  acceptsMediaType,
  isTerminal,
  type Message,
  type Task,
  type TaskPushNotificationConfig,
} from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import { checkMessageLimits, DEFAULT_LIMITS, type PayloadLimits } from '../../domain/limits.ts';
import type { Actor, ActorCatalog } from '../ports/actor.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { TurnAdmission } from '../ports/quota.port.ts';
import type { MessageKey, TaskRepository } from '../ports/task.repository.port.ts';
import type { SessionService } from '../sessions/session.service.ts';
import type { LiveTask, LiveTasks } from './live-tasks.service.ts';
import { messageFingerprint } from './message-fingerprint.ts';
import type { OwnedTasks } from './owned-tasks.service.ts';
import { isMessageKeyTaken, messageIdReused, stateWord } from './task.errors.ts';
import type { InlinePushRegistrar, PreparedInlinePush, SendInput } from './task.types.ts';
import { viewTask } from './task.views.ts';

/** What every answer of this agent is written in (actors' replies and the status messages of a turn). */
const ANSWER_MEDIA_TYPE = 'text/plain';

/** What a send was accepted as: a direct reply, a retry of a message already sent, or a turn to run. */
export type Accepted =
  | { direct: Message }
  | { replay: string }
  | {
      live: LiveTask;
      actor: Actor;
      message: Message;
      isFollowUp: boolean;
      /** The session had no task before this one (ActorTurn.opensSession). */
      opensSession?: boolean;
      created?: Promise<void>;
    };

export interface MessageIntakeDeps {
  tasks: TaskRepository;
  sessions: SessionService;
  actors: ActorCatalog;
  live: LiveTasks;
  owned: OwnedTasks;
  now: () => Date;
  limits?: PayloadLimits | undefined;
  /** Takes the inline push configs of sends (absent: a send with one is refused, PUSH_NOT_SUPPORTED). */
  inlinePush?: InlinePushRegistrar | undefined;
  /** Refuses a turn over the sender's limits (absent: none). */
  admission?: TurnAdmission | undefined;
}

export type { TurnAdmission };

/**
 * Takes a sent message in: checks it, recognises a retry by its message key (principal,
 * messageId), and stores the new task (or the follow-up on an existing one) with its key and an
 * inline push config, so the turn may start at once.
 */
export class MessageIntake {
  /** Sends in progress per message key, so a concurrent retry waits for the first one's task. */
  private readonly claims = new Map<string, Promise<void>>();

  private readonly deps: MessageIntakeDeps;

  constructor(deps: MessageIntakeDeps) {
    this.deps = deps;
  }

  /**
   * accept(), unless the message was already sent: then the task it names. Sends of one message
   * key in this process run one after another (a retry waits until the first one's key is
   * stored); across processes the key's unique index decides (see TaskService.send()).
   */
  async acceptOrReplay(input: SendInput, principal: Principal): Promise<Accepted> {
    const incoming = input.message;
    // Before anything is stored (a session, the task row).
    checkMessageLimits(incoming, input.metadata, this.deps.limits ?? DEFAULT_LIMITS);
    if (incoming.role !== 'ROLE_USER') {
      throw new AppError('INVALID_PARAMS', 'A message sent to the agent must have role ROLE_USER', {
        fields: [{ field: 'message.role', description: 'must be ROLE_USER' }],
      });
    }
    const accepted = input.configuration?.acceptedOutputModes;
    if (!acceptsMediaType(accepted, ANSWER_MEDIA_TYPE)) {
      throw new AppError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `This agent answers in ${ANSWER_MEDIA_TYPE}, which acceptedOutputModes (${(accepted ?? []).join(', ')}) does not accept`,
        {
          details: { accepted, answers: ANSWER_MEDIA_TYPE },
          fields: [
            {
              field: 'configuration.acceptedOutputModes',
              description: `include ${ANSWER_MEDIA_TYPE} (or text/*, */*), or leave it out`,
            },
          ],
        },
      );
    }
    const key: MessageKey = {
      owner: principal.namespace,
      messageId: incoming.messageId,
      hash: messageFingerprint(incoming),
    };
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
      if ('created' in accepted && accepted.created !== undefined) accepted.created.then(done, done);
      else done();
      return accepted;
    } catch (err) {
      done();
      throw err;
    }
  }

  /** The task a message key names (after a concurrent send of the same message won the race). */
  async keyedTask(input: SendInput, principal: Principal): Promise<string> {
    const hit = await this.deps.tasks.findMessageKey(principal.namespace, input.message.messageId);
    if (!hit)
      throw new AppError('INTERNAL', `message ${input.message.messageId} is recorded as sent but its task is missing`);
    if (hit.hash !== messageFingerprint(input.message)) throw messageIdReused(input.message.messageId);
    return hit.taskId;
  }

  private async accept(input: SendInput, principal: Principal, key: MessageKey): Promise<Accepted> {
    const incoming = input.message;
    // Before anything is stored; a retry of a message already accepted (a replay) is not a new turn.
    await this.deps.admission?.admitTurn(principal);
    if (incoming.taskId) return this.acceptFollowUp(input, incoming.taskId, principal, key);
    const { tasks, sessions, live: registry } = this.deps;
    const inlinePush = input.configuration?.taskPushNotificationConfig;
    // The inline config is checked before anything is stored (a refused webhook stores nothing).
    const taskId = newId();
    const push = inlinePush && (await this.preparePush(taskId, inlinePush, principal));

    await this.deps.owned.refuseChat(incoming.contextId);
    const { session, stored: sessionStored } = await sessions.resolveForMessage(incoming.contextId, principal);
    const actor = await this.actorFor(session.actor);
    const message: Message = { ...incoming, contextId: session.id };
    const direct = actor.reply?.(message);
    if (direct) {
      await sessionStored;
      return { direct: { ...direct, contextId: session.id } };
    }

    const stamped: Message = { ...message, taskId };
    const task: Task = {
      id: taskId,
      contextId: session.id,
      status: { state: 'TASK_STATE_SUBMITTED', timestamp: this.deps.now().toISOString() },
      history: [stamped],
    };
    if (input.metadata && Object.keys(input.metadata).length > 0) task.metadata = input.metadata;
    // The task row (and a new session's, the message key and an inline push config) is stored in
    // the same group commit as the first events of the turn: the turn may start at once, because
    // every delivery waits behind the rows (the chain starts with them) and callers answer only
    // after they are stored (`created`). The push config is written by the task's own create (one
    // write with the row), never on its own: on PostgreSQL it could otherwise land first.
    // Without an inline config the new task has none (no read at its first event).
    const withdraw = push ? undefined : this.deps.inlinePush?.createdWithout?.(taskId);
    const created = Promise.all([
      sessionStored,
      tasks.create(task, principal.namespace, key, push?.config, principal.id).then(() => push?.created()),
      sessions.recordTask(session.id, task.status.timestamp ?? this.deps.now().toISOString()),
    ]).then(() => undefined);
    const live = registry.register(task, principal.namespace, 0);
    live.chain = created;
    created.catch(() => {
      withdraw?.();
      // The caller of send/stream gets this failure (and the dispatcher logs it).
      live.failureReported = true;
      live.abort.abort();
      registry.drop(live);
    });
    return { live, actor, message: stamped, isFollowUp: false, opensSession: session.taskCount === 0, created };
  }

  /** A message on an existing task: stored in its history (with its key) before the turn runs. */
  private async acceptFollowUp(
    input: SendInput,
    taskId: string,
    principal: Principal,
    key: MessageKey,
  ): Promise<Accepted> {
    const incoming = input.message;
    const registry = this.deps.live;
    const inlinePush = input.configuration?.taskPushNotificationConfig;
    // Checked before the task is taken: the check may wait for a name lookup.
    const push = inlinePush && (await this.preparePush(taskId, inlinePush, principal));
    const live = await registry.acquire(taskId, principal);
    const task = live.task;
    if (incoming.contextId && incoming.contextId !== task.contextId) {
      registry.release(live);
      throw new AppError(
        'INVALID_PARAMS',
        `message.contextId ${incoming.contextId} does not match task ${task.id}'s context ${task.contextId}`,
        {
          fields: [{ field: 'message.contextId', description: 'must match the context of the referenced task' }],
        },
      );
    }
    if (isTerminal(task.status.state)) {
      registry.release(live);
      throw new AppError(
        'UNSUPPORTED_OPERATION',
        `Task ${task.id} is ${stateWord(task.status.state)} and accepts no further messages`,
        {
          details: { taskId: task.id, state: task.status.state },
          hint: 'send a new message without taskId to start a new task in the same context',
        },
      );
    }
    const actor =
      (await this.deps.owned.inputFor(live, incoming, principal)) ??
      (await this.actorFor((await this.deps.sessions.find(task.contextId))?.actor));
    const message: Message = { ...incoming, taskId: task.id, contextId: task.contextId };
    (task.history ??= []).push(message);
    const seq = live.seq;
    // Stored as its view (the recorder's snapshots are too): GetTask may send the stored text as it is.
    // The sender's turn from now on (per-user limits count it as theirs, not the task's first sender's).
    const saved = live.chain.then(() =>
      this.deps.tasks.saveSnapshot(viewTask(task, { copy: false }), seq, key, principal.id),
    );
    // A key taken by a concurrent send leaves the task as it was; other failures stop the task.
    live.chain = saved.catch((err: unknown) => {
      if (!isMessageKeyTaken(err)) throw err;
    });
    try {
      await saved;
      // The task exists (its message is stored): the config cannot precede it.
      if (push) await push.store();
    } catch (err) {
      if (isMessageKeyTaken(err)) {
        task.history?.splice(task.history.indexOf(message), 1);
        registry.release(live);
        return { replay: await this.keyedTask(input, principal) };
      }
      // The caller gets the failure; the task is dropped from memory, so the next reader sees
      // what is stored (without the message that was not).
      live.failureReported = true;
      registry.release(live);
      throw err;
    }
    return { live, actor, message, isFollowUp: true };
  }

  private async preparePush(
    taskId: string,
    config: TaskPushNotificationConfig,
    principal: Principal,
  ): Promise<PreparedInlinePush> {
    if (!this.deps.inlinePush)
      throw new AppError('PUSH_NOT_SUPPORTED', 'Push notifications are not supported by this agent');
    return this.deps.inlinePush.prepare(taskId, config, principal);
  }

  private async actorFor(name: string | undefined): Promise<Actor> {
    const { actors, sessions } = this.deps;
    const actor = await actors.resolve(name ?? sessions.defaultActor);
    if (!actor)
      throw new AppError(
        'INVALID_STATE',
        `The actor ${name ?? sessions.defaultActor} of this session no longer exists`,
        { hint: 'start a new session with `agents session create --actor …`' },
      );
    return actor;
  }
}
