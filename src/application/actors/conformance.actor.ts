import { newId } from '../../domain/ids.ts';
import type { Message } from '../../domain/a2a.model.ts';
import type { Actor, ActorTurn } from '../ports/actor.port.ts';

const BEHAVIOURS = [
  'tck-complete-task',
  'tck-input-required',
  'tck-auth-required',
  'tck-reject-task',
  'tck-task-failure',
  'tck-message-response',
  'tck-long-running',
  'tck-cancel',
] as const;
type Behaviour = (typeof BEHAVIOURS)[number] | 'default';

const behaviourOf = (messageId: string | undefined): Behaviour =>
  BEHAVIOURS.find((b) => messageId?.startsWith(b)) ?? 'default';

export interface ConformanceOptions {
  /** Pause between the progress updates of `tck-long-running`. */
  stepMs?: number;
  steps?: number;
}

/**
 * `builtin/conformance`: behaves as the A2A TCK's reference agent. By default a task goes to
 * WORKING and stays there, accepting follow-up messages, until cancelled; a messageId prefix
 * (`tck-complete-task`, `tck-input-required`, …) selects another behaviour.
 */
export class ConformanceActor implements Actor {
  readonly name = 'builtin/conformance';
  readonly description = 'Behaves as the A2A TCK reference agent (messageId prefixes tck-*), for conformance kits.';
  private readonly stepMs: number;
  private readonly steps: number;

  constructor(opts: ConformanceOptions = {}) {
    this.stepMs = opts.stepMs ?? 200;
    this.steps = opts.steps ?? 5;
  }

  reply(message: Message): Message | undefined {
    if (behaviourOf(message.messageId) !== 'tck-message-response') return undefined;
    const m: Message = { messageId: newId(), role: 'ROLE_AGENT', parts: [{ text: 'Direct message response' }] };
    if (message.contextId) m.contextId = message.contextId;
    return m;
  }

  async handle(turn: ActorTurn): Promise<void> {
    const first = turn.task.history?.[0]?.messageId;
    const behaviour = behaviourOf(turn.isFollowUp ? first : turn.message.messageId);
    if (turn.isFollowUp) return this.followUp(turn, behaviour);
    switch (behaviour) {
      case 'tck-complete-task':
        await turn.status('TASK_STATE_WORKING');
        await turn.artifact(
          { artifactId: 'result', name: 'result', parts: [{ text: 'Task completed successfully' }] },
          { lastChunk: true },
        );
        return turn.status('TASK_STATE_COMPLETED', 'Task completed');
      case 'tck-input-required':
        await turn.status('TASK_STATE_WORKING');
        return turn.status('TASK_STATE_INPUT_REQUIRED', 'Please provide additional input');
      case 'tck-auth-required':
        await turn.status('TASK_STATE_WORKING');
        return turn.status('TASK_STATE_AUTH_REQUIRED', 'Authentication is required to continue');
      case 'tck-reject-task':
        return turn.status('TASK_STATE_REJECTED', 'Task rejected');
      case 'tck-task-failure':
        await turn.status('TASK_STATE_WORKING');
        return turn.status('TASK_STATE_FAILED', 'Task failed');
      case 'tck-long-running':
        return this.longRunning(turn);
      default:
        // default and tck-cancel: WORKING until cancelled.
        return turn.status('TASK_STATE_WORKING', 'Task is being processed');
    }
  }

  private async followUp(turn: ActorTurn, behaviour: Behaviour): Promise<void> {
    if (behaviour === 'tck-input-required' || behaviour === 'tck-auth-required') {
      await turn.status('TASK_STATE_WORKING');
      await turn.artifact(
        { artifactId: 'result', name: 'result', parts: [{ text: 'Input received; task completed' }] },
        { lastChunk: true },
      );
      return turn.status('TASK_STATE_COMPLETED', 'Task completed');
    }
    return turn.status('TASK_STATE_WORKING', 'Follow-up message received');
  }

  private async longRunning(turn: ActorTurn): Promise<void> {
    await turn.status('TASK_STATE_WORKING', 'Starting long-running task');
    for (let i = 1; i <= this.steps; i++) {
      await sleep(this.stepMs, turn.signal);
      if (turn.signal.aborted) return;
      await turn.status('TASK_STATE_WORKING', `Progress ${i}/${this.steps}`);
    }
    await turn.artifact(
      { artifactId: 'result', name: 'result', parts: [{ text: 'Long-running task completed' }] },
      { lastChunk: true },
    );
    await turn.status('TASK_STATE_COMPLETED', 'Task completed');
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
