import { isTerminal, type Message, type TaskState } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import type { Actor, ActorTurn } from '../ports/actor.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import { systemPrincipalFor } from '../ports/principal.ts';
import type { StoredTask, TaskRepository } from '../ports/task.repository.port.ts';
import { NO_TRACER, type TraceSpan, type Tracer } from '../ports/tracer.port.ts';
import type { LiveTask, LiveTasks } from './live-tasks.service.ts';
import { errorText, isReported } from './task.errors.ts';
import type { TaskEventRecorder } from './task-event.recorder.ts';
import { TurnAbort } from './turn-abort.ts';

/** The status message of a turn whose events storage stopped taking (a database outage). */
const LOST_TEXT =
  'Interrupted: storage became unavailable during this turn, so what it did after that was not recorded; send the message again (with a new messageId) to retry';

export interface TurnRunnerDeps {
  tasks: Pick<TaskRepository, 'endTurn' | 'get'>;
  live: LiveTasks;
  recorder: TaskEventRecorder;
  logger: Logger;
  /** A span per turn (absent: none). */
  tracer?: Tracer | undefined;
}

/**
 * Runs actor turns of live tasks, one after another per task, and contains whatever they do: an
 * actor that throws fails its task, a store that fails is reported once, and a turn always ends
 * (releasing the task when nothing else needs it).
 */
export class TurnRunner {
  private readonly deps: TurnRunnerDeps;
  /**
   * Tasks (id → owner) whose turn here ended because storage failed: still working in the store,
   * named as run by this live process, so no other process settles them. {@link settleLost} does.
   */
  private readonly lost = new Map<string, string>();

  constructor(deps: TurnRunnerDeps) {
    this.deps = deps;
  }

  /** `by`: who sent the message (or started the phase): see ActorTurn.by. */
  start(live: LiveTask, actor: Actor, message: Message, isFollowUp: boolean, opensSession = false, by?: string): void {
    const { recorder, logger } = this.deps;
    live.running++;
    // Watched while it runs: a cancel written by another process stops it promptly.
    this.deps.live.follow(live, { readNow: false });
    const turn = this.turnOf(live, message, isFollowUp, opensSession, by);
    // Started here, in the request that queued the turn: its span is the turn's parent.
    const tracer = this.deps.tracer ?? NO_TRACER;
    const span = turnSpan(tracer, actor, live);
    live.turns = live.turns
      .then(async () => {
        if (isTerminal(live.task.status.state)) return;
        try {
          await tracer.within(span, () => actor.handle(turn));
        } catch (err) {
          span.recordError(err);
          if (live.abort.aborted || live.failure !== undefined) return;
          logger.error({ err, taskId: live.task.id, actor: actor.name }, 'actor failed');
          // A failure to store this is the chain's, reported below.
          await recorder
            .status(live, 'TASK_STATE_FAILED', `The actor ${actor.name} failed: ${errorText(err)}`)
            .catch(() => {});
        }
      })
      .catch((err: unknown) => logger.error({ err, taskId: live.task.id }, 'actor turn failed'))
      .finally(async () => {
        span.setAttributes({ 'cleveragents.task.state': live.task.status.state });
        span.end();
        // A failed store has already stopped delivery (and reached the actor); the turn still ends.
        await live.chain.catch((err: unknown) => {
          if (live.failureReported || isReported(err)) return;
          live.failureReported = true;
          logger.error({ err, taskId: live.task.id }, 'storing the task failed');
        });
        if (live.failure !== undefined && !live.overtaken) {
          // What the store holds is behind this turn: settled once storage is back (not left
          // unowned by endTurn, which would make it look like a task its actor left open).
          this.lost.set(live.task.id, live.owner);
        } else if (live.running === 1 && isRunningState(live.task.status.state)) {
          // Left open by its actor and no other turn queued: nothing runs it now (see settleStranded).
          await this.deps.tasks
            .endTurn(live.task.id)
            .catch((err: unknown) => logger.warn({ err, taskId: live.task.id }, 'recording the end of a turn failed'));
        }
        live.running--;
        for (const w of [...live.turnEndWaiters]) w();
        this.deps.live.release(live);
      })
      // Nothing above throws; a turn must never leave a rejection behind all the same.
      .catch(() => {});
  }

  /** What the actor is handed: the task, the message, and how it reports (paced, in order). */
  private turnOf(
    live: LiveTask,
    message: Message,
    isFollowUp: boolean,
    opensSession: boolean,
    by: string | undefined,
  ): ActorTurn {
    const { recorder } = this.deps;
    return {
      task: live.task,
      message,
      isFollowUp,
      opensSession,
      by,
      // Made when the actor first reads it (TurnAbort).
      get signal() {
        return live.abort.signal;
      },
      get aborted() {
        return live.abort.aborted;
      },
      status: (state, text, extra) => recorder.paced(live, recorder.status(live, state, text, false, extra)),
      artifact: (artifact, opts) => recorder.paced(live, recorder.artifact(live, artifact, opts)),
      stored: () =>
        live.chain.then(
          () => undefined,
          () => undefined,
        ),
    };
  }

  /**
   * Ends as FAILED the tasks whose turn here stopped because storage failed, once storage answers
   * again (the periodic sweep calls this): their subscribers, here or on other instances, get that
   * final event. A task still unreadable stays for the next call. Returns the ids settled.
   */
  async settleLost(): Promise<string[]> {
    const settled: string[] = [];
    for (const [taskId, owner] of [...this.lost]) {
      try {
        if (await this.settleLostTurn(taskId, owner)) settled.push(taskId);
        this.lost.delete(taskId);
      } catch (err) {
        this.deps.logger.warn({ err, taskId }, 'settling a turn that storage lost failed; tried again later');
      }
    }
    if (settled.length > 0) this.deps.logger.warn({ tasks: settled }, 'settled turns that storage lost');
    return settled;
  }

  private async settleLostTurn(taskId: string, owner: string): Promise<boolean> {
    const { live: registry, recorder, tasks } = this.deps;
    const stored = await tasks.get(taskId);
    // Gone, ended (e.g. settled by another instance meanwhile) or waiting for input: nothing to do.
    if (!stored || !isRunningState(stored.task.status.state)) return false;
    const held = registry.get(taskId);
    if (held && held.running > 0) return false; // a later turn runs it now
    if (held) restartFrom(held, stored);
    const live = held ?? (await registry.acquire(taskId, systemPrincipalFor(owner)));
    // Held while its final status is written, as this process's own (fenced: written only while
    // the task still names this runner; another that settled it meanwhile wins).
    live.running++;
    try {
      await recorder.status(live, 'TASK_STATE_FAILED', LOST_TEXT, true);
    } finally {
      live.running--;
      registry.release(live);
    }
    return true;
  }

  /**
   * A graceful stop: lets the running turns finish for up to `deadlineMs`, then ends those still
   * running as FAILED with `text`. Returns how many had to be ended.
   */
  async drain(deadlineMs: number, text: string): Promise<number> {
    const running = (): LiveTask[] => this.deps.live.all().filter((l) => l.running > 0);
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
      await this.deps.recorder
        .status(live, 'TASK_STATE_FAILED', text, true)
        .catch((err: unknown) =>
          this.deps.logger.error({ err, taskId: live.task.id }, 'settling a task at shutdown failed'),
        );
    }
    return left.length;
  }
}

/** A turn's span, as the OpenTelemetry GenAI conventions name an agent's invocation. */
function turnSpan(tracer: Tracer, actor: Actor, live: LiveTask): TraceSpan {
  return tracer.start(`invoke_agent ${actor.name}`, {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': actor.name,
      'gen_ai.conversation.id': live.task.contextId,
      'cleveragents.task.id': live.task.id,
    },
  });
}

function isRunningState(s: TaskState): boolean {
  return s === 'TASK_STATE_SUBMITTED' || s === 'TASK_STATE_WORKING';
}

/**
 * A live task whose turn failed to store its events, taken back to what the store holds, so that
 * its subscribers here stay and the settling status is written after the stored events.
 */
function restartFrom(live: LiveTask, stored: StoredTask): void {
  live.task = stored.task;
  live.seq = stored.seq;
  live.chain = Promise.resolve();
  live.backlog = 0;
  delete live.failure;
  delete live.failureReported;
  delete live.sinceSnapshot;
  live.abort = new TurnAbort();
}
