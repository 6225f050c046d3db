import { approvalRequestOf, approvalWhat, type Task } from '../../../protocol/client/index.ts';
import { CliError, type ExitReason } from '../exit-codes.ts';
import {
  isInterruptedState,
  fallbackOf,
  isUnsuccessfulState,
  messageWords,
  stateWord,
  styleState,
  usageLine,
  usageOf,
} from '../render/task.render.ts';
import type { Ui } from '../render/ui.ts';
import type { CancelOutcome } from './turn-cancel.ts';

/** How a command that waited for a task ends: non-zero when the task failed, was rejected or canceled. */
export const exitForTask = (task: Task | undefined): ExitReason | undefined =>
  task && isUnsuccessfulState(task.status.state) ? 'TASK_UNSUCCESSFUL' : undefined;

/**
 * A task left waiting for an approval that no one here can give (no terminal; `send` asks nothing
 * itself): exit 5, as the plan commands do, with the command that answers it.
 */
export function approvalWaitError(task: Task | undefined, stdinIsTerminal: boolean): CliError | undefined {
  if (stdinIsTerminal || task?.status.state !== 'TASK_STATE_INPUT_REQUIRED') return undefined;
  const request = approvalRequestOf(task.status.message);
  if (!request) return undefined;
  // A chat's tool call has no step number: the tool alone says what is asked.
  const what =
    request.kind === 'tool-call' && request.step === undefined
      ? (request.tool ?? 'a tool call')
      : approvalWhat(request);
  return new CliError(
    `task ${task.id} waits for approval of ${what}`,
    'INVALID_STATE',
    'ApprovalRequired',
    `approve: agents send --task ${task.id} yes · reject: agents send --task ${task.id} no`,
    { taskId: task.id },
  );
}

/**
 * A task that failed or was rejected, as the command's error (stderr, exit 9): the agent's own
 * words and hint (the `error` data part of its last message), not a dump of the task with that
 * JSON glued to the text.
 */
export function taskFailureError(task: Task | undefined): CliError | undefined {
  const state = task?.status.state;
  if (!task || (state !== 'TASK_STATE_FAILED' && state !== 'TASK_STATE_REJECTED')) return undefined;
  const error = task.status.message?.parts
    .map((p) => (p.data as { error?: unknown } | undefined)?.error)
    .find((e): e is Record<string, unknown> => typeof e === 'object' && e !== null);
  const said = typeof error?.['message'] === 'string' ? error['message'] : messageWords(task.status.message);
  const hint = typeof error?.['hint'] === 'string' ? error['hint'] : undefined;
  const what = state === 'TASK_STATE_FAILED' ? 'failed' : 'was rejected';
  return new CliError(
    `task ${task.id} ${what}${said ? `: ${said}` : ''}`,
    'TASK_UNSUCCESSFUL',
    state === 'TASK_STATE_FAILED' ? 'TaskFailed' : 'TaskRejected',
    hint,
    { taskId: task.id, contextId: task.contextId, ...(error?.['kind'] ? { kind: error['kind'] } : {}) },
  );
}

/** An LLM turn's token usage and cost, on stderr (rich output only). */
export function reportUsage(ui: Ui, task: Task | undefined): void {
  const usage = usageOf(task);
  if (usage && ui.rich) ui.err(`${ui.errPal.dim(usageLine(usage))}\n`);
}

/** Which model answered after which failed, on stderr (rich and plain): the answer came from a fallback. */
export function reportFallback(ui: Ui, task: Task | undefined): void {
  const line = fallbackOf(task);
  if (line) ui.err(ui.rich ? `${ui.errPal.dim(line)}\n` : `fallback: ${line}\n`);
}

/** After the answer: the task and its state (stderr, rich); what to do next when the agent waits. */
export function reportTaskEnd(ui: Ui, task: Task | undefined): void {
  if (!task) return;
  const state = task.status.state;
  const why = messageWords(task.status.message);
  if (ui.rich) {
    ui.err(
      `${ui.errPal.dim(`task ${task.id} · `)}${styleState(state, ui.errPal)}${ui.errPal.dim(` · session ${task.contextId}`)}${why && state !== 'TASK_STATE_COMPLETED' ? ui.errPal.dim(` · ${why}`) : ''}\n`,
    );
  } else if (state !== 'TASK_STATE_COMPLETED') {
    ui.err(`task ${task.id} ${stateWord(state)}${why ? `: ${why}` : ''}\n`);
  }
  reportUsage(ui, task);
  reportFallback(ui, task);
  if (isInterruptedState(state)) ui.info(`the agent waits for you: agents send --task ${task.id} "…"`);
}

/**
 * After Ctrl-C, when the agent did not confirm the cancel: the task may still run, and how to stop
 * it. (When it did, the task's own line from {@link reportTaskEnd} says "canceled".)
 */
export function reportCancel(ui: Ui, outcome: CancelOutcome): void {
  if (outcome.kind !== 'unconfirmed') return;
  const why = outcome.problem instanceof Error ? outcome.problem.message : String(outcome.problem);
  if (outcome.taskId === undefined) return ui.warn(`the turn may still run: the agent named no task for it (${why})`);
  ui.warn(`task ${outcome.taskId} may still run: the cancel was not confirmed (${why})`);
  ui.info(`stop it with: agents task cancel ${outcome.taskId}`);
}
