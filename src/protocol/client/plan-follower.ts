/**
 * Following a plan's phase to its next stop, for every front end (the CLI, the TUI, the ACP
 * bridge, the VS Code extension): its task's stream (see task-follow.ts), each progress message
 * once, the plan's phase as its events say, approvals asked and answered, and how it stopped —
 * done, failed with a plan error, or waiting for an answer that could not be given here.
 */
import type { Message, StreamResponse, Task, TaskState } from '../../domain/a2a.model.ts';
import type { ApprovalRequest } from '../../domain/plan/approval-request.ts';
import { answerTask, approvalRequestOf, dataOf, type ApprovalAnswer } from './approvals.ts';
import type { A2AClient } from './client.ts';
import { foldEvent, watchTask } from './task-follow.ts';

/** Where a plan task's progress messages say which phase and state the plan is in. */
const PLAN_META = 'urn:cleveragents:plan';

/** A plan's phase and state (and, executing, the steps done) as its task's events carry them. */
export interface PlanPhase {
  planId: string;
  phase: string;
  state: string;
  /** How far the phase got (execute: the steps or tool calls done), when the message says. */
  stepsDone?: number;
}

/** The plan's phase, state and progress in a plan task's metadata (of a status event, or of its message). */
export function planPhaseIn(metadata: Record<string, unknown> | undefined): PlanPhase | undefined {
  const meta = metadata?.[PLAN_META] as Partial<PlanPhase> | undefined;
  if (typeof meta?.planId !== 'string' || typeof meta.phase !== 'string' || typeof meta.state !== 'string')
    return undefined;
  return {
    planId: meta.planId,
    phase: meta.phase,
    state: meta.state,
    ...(typeof meta.stepsDone === 'number' ? { stepsDone: meta.stepsDone } : {}),
  };
}

/**
 * The plan's phase and state a plan task's event carries, if it is one: the plan service puts them
 * on the status event's metadata (a message, where one came with them, may carry them too).
 */
export function planPhaseOf(event: StreamResponse): PlanPhase | undefined {
  if ('statusUpdate' in event)
    return planPhaseIn(event.statusUpdate.metadata) ?? planPhaseIn(event.statusUpdate.status.message?.metadata);
  if ('task' in event) return planPhaseIn(event.task.status.message?.metadata);
  return undefined;
}

/** The error a plan's run stopped with, as its task's message carries it (`planError` data part). */
export interface PlanRunError {
  kind: string;
  message: string;
  hint?: string;
  files?: string[];
}

/** Where following stopped. */
export interface PlanStop {
  /** The task as it was last seen (its events folded in). */
  task: Task | undefined;
  /** Every approval asked and answered on the way. */
  approvals: Array<{ request: ApprovalRequest; answer: ApprovalAnswer }>;
  planError?: PlanRunError;
  /** The approval the run waits for that could not be answered here. */
  unanswered?: ApprovalRequest;
}

/** What a front end does with what following a plan reports. */
export interface PlanFollowHandlers {
  /** Every event of the task's stream, as it arrives (before what it says is reported). */
  event?(seq: number, event: StreamResponse, status: Task['status'] | undefined): void | Promise<void>;
  /**
   * A message of the task's agent, each once (on first sight of the task, those after the last
   * user message): a progress line, an approval's question, a plan error (`planError` data).
   */
  message?(m: Message, state: TaskState): void | Promise<void>;
  /** Where the plan is, when a status event says. */
  phase?(p: PlanPhase): void | Promise<void>;
  /** The stream ended (the task ended, or the connection closed at an interruption). */
  streamEnded?(): void;
  /** The task as read after its stream ended early, once its messages were reported. */
  snapshot?(task: Task): void | Promise<void>;
  /** The answer to an approval request; undefined when it cannot be answered here (following stops). */
  decide(request: ApprovalRequest, status: Task['status']): Promise<ApprovalAnswer | undefined>;
  /** Gives the answer (by default on the waiting task). */
  send?(answer: ApprovalAnswer, request: ApprovalRequest): Promise<void>;
  /** The error to throw when the connection to the agent is lost. */
  lost(err: unknown): Error;
}

/** Follows a plan's phase (its task) to the end, or to an approval that is not answered here. */
export async function followPlan(
  client: A2AClient,
  taskId: string,
  signal: AbortSignal,
  h: PlanFollowHandlers,
): Promise<PlanStop> {
  const stop: PlanStop = { task: undefined, approvals: [] };
  const seen = new Set<string>();
  let firstView = true;

  const report = async (m: Message | undefined, state: TaskState): Promise<void> => {
    if (!m || seen.has(m.messageId)) return;
    seen.add(m.messageId);
    const pe = dataOf(m, 'planError') as PlanRunError | undefined;
    if (pe) stop.planError = pe;
    await h.message?.(m, state);
  };
  /** What a snapshot says that was not reported yet (on first sight: after the last user message). */
  const history = async (t: Task): Promise<void> => {
    const messages = t.history ?? [];
    if (firstView) {
      const lastUser = messages.map((m) => m.role).lastIndexOf('ROLE_USER');
      for (const m of messages.slice(0, lastUser + 1)) seen.add(m.messageId);
      firstView = false;
    }
    const current = t.status.message?.messageId;
    for (const m of messages)
      if (m.role === 'ROLE_AGENT') await report(m, m.messageId === current ? t.status.state : 'TASK_STATE_WORKING');
    await report(t.status.message, t.status.state);
  };

  await watchTask(client, taskId, signal, {
    event: async (seq, event, status) => {
      stop.task = foldEvent(stop.task, event);
      await h.event?.(seq, event, status);
      if ('task' in event) await history(event.task);
      else if (status) await report(status.message, status.state);
      const p = 'statusUpdate' in event ? planPhaseIn(event.statusUpdate.metadata) : undefined;
      if (p) await h.phase?.(p);
    },
    streamEnded: () => h.streamEnded?.(),
    snapshot: async (t) => {
      stop.task = t;
      await history(t);
      await h.snapshot?.(t);
    },
    input: answerer(client, taskId, signal, h, stop),
    lost: (err) => h.lost(err),
  });
  return stop;
}

/**
 * Answers the input-required statuses that are approval requests not answered yet (each once,
 * into `stop.approvals`); false (stop following) when one cannot be answered here.
 */
function answerer(
  client: A2AClient,
  taskId: string,
  signal: AbortSignal,
  h: PlanFollowHandlers,
  stop: PlanStop,
): (status: Task['status']) => Promise<boolean> {
  const answered = new Set<string>();
  return async (status) => {
    const key = status.message?.messageId ?? `${status.timestamp}`;
    if (answered.has(key)) return true;
    const request = approvalRequestOf(status.message);
    if (!request) {
      stop.unanswered = { kind: 'tool-call' };
      return false;
    }
    const answer = await h.decide(request, status);
    if (!answer) {
      stop.unanswered = request;
      return false;
    }
    answered.add(key);
    stop.approvals.push({ request, answer });
    await (h.send ? h.send(answer, request) : answerTask(client, taskId, answer, signal));
    return true;
  };
}
