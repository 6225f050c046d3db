import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline/promises';
import { setTimeout as delay } from 'node:timers/promises';
import {
  A2AClientError,
  getTask,
  sendMessage,
  subscribeToTask,
  type A2AClient,
  type Message,
  type StreamResponse,
  type Task,
} from '../../../protocol/client/index.ts';
import { CliError } from '../exit-codes.ts';
import { renderDiff } from '../render/plan.ts';
import type { StreamedEvent } from '../render/stream.ts';
import { foldEvent, isTerminalState, stateWord } from '../render/task.ts';
import type { Ui } from '../render/ui.ts';
import type { RunContext } from '../runner.ts';

/** What a plan task asks the user to approve (a data part of its input-required status). */
export interface ApprovalRequest {
  kind: 'tool-call' | 'apply';
  planId?: string;
  step?: number;
  of?: number;
  tool?: string;
  args?: Record<string, unknown>;
  preview?: string;
  files?: string[];
  stats?: { files: number; additions: number; deletions: number };
  options?: string[];
}

export interface ApprovalAnswer {
  decision: 'approve' | 'reject';
  guidance?: string;
}

export interface FollowOptions {
  planId: string;
  /** Approve whatever the plan asks (--yes). */
  yes: boolean;
  /** Called with every event of the task's stream as it arrives (--events). */
  onEvent?: ((seq: number, event: StreamResponse) => void) | undefined;
}

export interface FollowResult {
  task: Task | undefined;
  events: StreamedEvent[];
  approvals: Array<{ request: ApprovalRequest; answer: ApprovalAnswer }>;
  /** The plan error the run ended with, if any (`{kind, message, hint, files}`). */
  planError?: { kind: string; message: string; hint?: string; files?: string[] };
  /** The approval the run waits for and that could not be given here (no terminal, no --yes). */
  unanswered?: ApprovalRequest;
}

/** The value under `key` in a data part of the message. */
export const dataOf = (m: Message | undefined, key: string): unknown =>
  m?.parts
    .map((p) => (p.data && typeof p.data === 'object' ? (p.data as Record<string, unknown>)[key] : undefined))
    .find((v) => v !== undefined);
/** What a task waiting for input asks to approve (the `approvalRequest` data part of its status message), if anything. */
export const approvalRequestOf = (m: Message | undefined): ApprovalRequest | undefined =>
  dataOf(m, 'approvalRequest') as ApprovalRequest | undefined;
const textOf = (m: Message | undefined): string => (m?.parts ?? []).map((p) => p.text ?? '').join('');

/** The methods following a plan's task may call (see COMMAND_METHODS). */
export const FOLLOW_CALLS = [subscribeToTask, getTask, sendMessage] as const;

/** What the approval is for, in a few words: `step 1/2: builtin/write-file` or `apply (2 files)`. */
export function approvalWhat(r: ApprovalRequest): string {
  if (r.kind === 'apply')
    return `apply (${r.stats ? `${r.stats.files} file${r.stats.files === 1 ? '' : 's'}` : 'the changes'})`;
  return `step ${r.step ?? '?'}${r.of ? `/${r.of}` : ''}: ${r.tool ?? 'a tool call'}`;
}

/**
 * Follows a plan's task to its end, printing each progress line as it arrives (status messages),
 * with tool-call details in rich mode, and answering approval requests on the same task: with
 * --yes, by asking on a terminal, or not at all (then it stops and says how to answer).
 * Local mode's agent lives only as long as this process, so callers follow before closing.
 */
export async function followPlanTask(
  ctx: RunContext,
  client: A2AClient,
  taskId: string,
  opts: FollowOptions,
): Promise<FollowResult> {
  const { ui } = ctx;
  const result: FollowResult = { task: undefined, events: [], approvals: [] };
  const printed = new Set<string>();
  let firstView = true;
  // A tool call's details arrive just before the progress line that reports it: they go under it.
  let detail = '';
  let words = '';

  const printMessage = (m: Message, state: string): void => {
    if (printed.has(m.messageId)) return;
    printed.add(m.messageId);
    const pe = dataOf(m, 'planError') as FollowResult['planError'];
    if (pe) result.planError = pe;
    const text = textOf(m);
    if (text) ui.out(`${styleLine(text, state, ui)}\n`);
    ui.out(detail);
    detail = '';
  };

  /** Agent messages of a snapshot not printed yet (on first sight: those after the last user message). */
  const printHistory = (t: Task): void => {
    const history = t.history ?? [];
    if (firstView) {
      const lastUser = history.map((m) => m.role).lastIndexOf('ROLE_USER');
      for (const m of history.slice(0, lastUser + 1)) printed.add(m.messageId);
      firstView = false;
    }
    for (const m of history)
      if (m.role === 'ROLE_AGENT') printMessage(m, m === t.status.message ? t.status.state : 'TASK_STATE_WORKING');
  };

  await watchTask(client, taskId, ctx.signal, {
    event: (seq, event, status) => {
      result.events.push({ seq, event });
      opts.onEvent?.(seq, event);
      result.task = foldEvent(result.task, event);
      if ('task' in event) printHistory(event.task);
      else if ('artifactUpdate' in event) {
        detail += artifactDetail(event, ui);
        words += actorWords(event, ui);
      } else if (status?.message) {
        // What the execution actor said before this line, as one dim paragraph.
        if (words.trim()) ui.out(`${ui.pal.dim(words.trim())}\n`);
        words = '';
        printMessage(status.message, status.state);
      } else if (status && isTerminalState(status.state))
        ui.out(`${styleLine(`Stopped: ${stateWord(status.state)}`, status.state, ui)}\n`);
    },
    streamEnded: () => {
      ui.out(detail);
      detail = '';
    },
    snapshot: (t) => {
      printHistory(t);
      result.task = t;
    },
    input: inputAnswerer(ctx, client, taskId, opts, result),
    lost: (err) => connectionLost(opts.planId, taskId, err),
  });
  return result;
}

/**
 * Answers the task's input-required statuses that are approval requests not answered yet (each
 * once, into `result.approvals`); the handler says false when one cannot be answered here.
 */
function inputAnswerer(
  ctx: RunContext,
  client: A2AClient,
  taskId: string,
  opts: FollowOptions,
  result: FollowResult,
): (status: Task['status']) => Promise<boolean> {
  const answered = new Set<string>();
  return async (status) => {
    const m = status.message;
    const key = m?.messageId ?? `${status.timestamp}`;
    if (answered.has(key)) return true;
    const request = approvalRequestOf(m);
    if (!request) {
      result.unanswered = { kind: 'tool-call' };
      return false;
    }
    const answer = await decide(ctx, request, opts);
    if (!answer) {
      result.unanswered = request;
      return false;
    }
    answered.add(key);
    result.approvals.push({ request, answer });
    await client.call(
      sendMessage,
      {
        message: { messageId: randomUUID(), role: 'ROLE_USER', taskId, parts: [{ data: { approval: answer } }] },
        configuration: { returnImmediately: true },
      },
      { signal: ctx.signal },
    );
    return true;
  };
}

/** The error of a plan run whose agent went away while it was followed. */
export function connectionLost(planId: string, taskId: string, err: unknown): CliError {
  return new CliError(
    `lost the connection to the agent while following plan ${planId}: ${err instanceof Error ? err.message : String(err)}`,
    'UNREACHABLE',
    'ConnectionLost',
    `once the agent is back, agents plan status ${planId} shows where it stopped; agents plan execute ${planId} resumes from the last checkpoint`,
    { planId, taskId },
  );
}

/** What a follower of a task does with what the task reports. */
export interface TaskWatcher {
  /** Every event of the task's stream, as it arrives (with its status, if it carries one). */
  event(seq: number, event: StreamResponse, status: Task['status'] | undefined): void | Promise<void>;
  /** The stream ended (the task ended, or the connection closed at an interruption). */
  streamEnded?(): void;
  /** The task as read after its stream ended early. */
  snapshot(task: Task): void | Promise<void>;
  /** The task waits for input: true once answered (following goes on), false to stop following. */
  input(status: Task['status']): Promise<boolean>;
  /** The error to throw when the connection to the agent is lost. */
  lost(err: unknown): Error;
}

/**
 * Follows a task to its end (or to an input it does not answer): its stream, resubscribed when it
 * ends early, with the task read in between. Shared by the CLI's plan commands and the ACP bridge.
 */
export async function watchTask(client: A2AClient, taskId: string, signal: AbortSignal, w: TaskWatcher): Promise<void> {
  for (;;) {
    let ended = false;
    // Leaving a subscription early must close it: over HTTP only an abort ends the SSE request
    // (the client does not cancel the body when the loop stops), and it would keep us alive.
    const sub = new AbortController();
    const stop = (): void => sub.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const { seq, event } of client.stream(subscribeToTask, { id: taskId }, { signal: sub.signal })) {
        const status = statusOf(event);
        await w.event(seq, event, status);
        if (!status) continue;
        if (status.state === 'TASK_STATE_INPUT_REQUIRED' && !(await w.input(status))) return;
        if (isTerminalState(status.state)) {
          ended = true;
          break;
        }
      }
    } catch (err) {
      // A task that ended before we subscribed cannot be subscribed to: its history has it all.
      if (err instanceof A2AClientError && err.type === 'UnsupportedOperationError') {
        // read below
      } else if (!(err instanceof A2AClientError) && !signal.aborted) throw w.lost(err);
      else throw err;
    } finally {
      signal.removeEventListener('abort', stop);
      sub.abort();
    }
    w.streamEnded?.();
    if (ended) return;
    const t = await client.call(getTask, { id: taskId }, { signal });
    await w.snapshot(t);
    if (isTerminalState(t.status.state)) return;
    if (t.status.state === 'TASK_STATE_INPUT_REQUIRED' && !(await w.input(t.status))) return;
    await delay(200, undefined, { signal }); // then subscribe again, without hammering
  }
}

const statusOf = (ev: StreamResponse): Task['status'] | undefined =>
  'statusUpdate' in ev ? ev.statusUpdate.status : 'task' in ev ? ev.task.status : undefined;

function styleLine(text: string, state: string, ui: Ui): string {
  if (!ui.rich) return text;
  const { pal } = ui;
  if (state === 'TASK_STATE_FAILED' || state === 'TASK_STATE_REJECTED') return pal.red(text);
  if (state === 'TASK_STATE_CANCELED') return pal.yellow(text);
  if (state === 'TASK_STATE_INPUT_REQUIRED') return pal.yellow(text);
  if (state === 'TASK_STATE_COMPLETED') return pal.green(text);
  if (/^\s*✓/.test(text)) return text.replace('✓', pal.green('✓'));
  if (/^(Checkpoint|Restored checkpoint|Sandbox for)/.test(text)) return pal.dim(text);
  return text;
}

/** Rich mode: the words a goal plan's execution actor streams (its `execution` artifact). */
function actorWords(ev: Extract<StreamResponse, { artifactUpdate: unknown }>, ui: Ui): string {
  const { artifact } = ev.artifactUpdate;
  if (!ui.rich || artifact.artifactId !== 'execution') return '';
  return artifact.parts.map((p) => p.text ?? '').join('');
}

/** Rich mode: what each tool call touched (from the execution log), to print under its progress line. */
function artifactDetail(ev: Extract<StreamResponse, { artifactUpdate: unknown }>, ui: Ui): string {
  if (!ui.rich) return '';
  const { artifact } = ev.artifactUpdate;
  if (artifact.artifactId !== 'execution-log') return '';
  let out = '';
  for (const p of artifact.parts) {
    const call = p.data as { filesTouched?: string[]; exitCode?: number | null } | undefined;
    if (!call) continue;
    const files = call.filesTouched ?? [];
    const bits = [
      files.length ? `files: ${files.join(', ')}` : 'no files changed',
      ...(call.exitCode !== undefined && call.exitCode !== null ? [`exit ${call.exitCode}`] : []),
    ];
    out += `${ui.pal.dim(`    ${bits.join(' · ')}`)}\n`;
  }
  return out;
}

/** The answer to an approval request: --yes, a question on the terminal, or none (undefined). */
async function decide(ctx: RunContext, r: ApprovalRequest, opts: FollowOptions): Promise<ApprovalAnswer | undefined> {
  const { ui } = ctx;
  if (opts.yes) {
    ui.info(`approved ${approvalWhat(r)} (--yes)`);
    return { decision: 'approve' };
  }
  const interactive = ui.human && ctx.io.stdin.isTTY === true && ctx.io.stdout.isTTY === true;
  if (!interactive) return undefined;
  ui.out(renderRequest(r, ui));
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stdout, terminal: true });
  rl.on('SIGINT', () => {
    ctx.interrupt();
    rl.close();
  });
  try {
    for (;;) {
      const a = (await rl.question(ui.pal.bold('Approve? [y]es / [n]o / [g]uidance '), { signal: ctx.signal }))
        .trim()
        .toLowerCase();
      if (a === 'y' || a === 'yes') return { decision: 'approve' };
      if (a === 'n' || a === 'no') return { decision: 'reject' };
      if (a === 'g' || a === 'guidance') {
        const guidance = (await rl.question('Guidance (what to do instead): ', { signal: ctx.signal })).trim();
        if (guidance) return { decision: 'reject', guidance };
      }
    }
  } finally {
    rl.close();
  }
}

/** The request for people: what would run or land, with its preview or file list. */
function renderRequest(r: ApprovalRequest, ui: Ui): string {
  const { pal } = ui;
  const lines = [`${pal.yellow(pal.bold('Approval needed'))}: ${approvalWhat(r)}`];
  if (r.preview) lines.push(renderDiff(r.preview, ui.mode).replace(/\n$/, ''));
  if (r.files?.length) lines.push(...r.files.map((f) => `  ${f}`));
  if (r.stats) lines.push(pal.dim(`  ${r.stats.files} file(s), +${r.stats.additions} -${r.stats.deletions}`));
  return `${lines.join('\n')}\n`;
}

/** How to go on when the run waits for an approval this process could not give. */
export function approvalError(planId: string, taskId: string, r: ApprovalRequest): CliError {
  return new CliError(
    `plan ${planId} needs approval for ${approvalWhat(r)}; run again with --yes, use --automation-profile auto, or answer with agents plan approve ${planId} or agents plan reject ${planId}`,
    'INVALID_STATE',
    'ApprovalRequired',
    `approve: agents plan approve ${planId} · reject: agents plan reject ${planId} --guidance "…" (or agents send --task ${taskId} no) · see it: agents plan status ${planId}`,
    { planId, taskId, approvalRequest: r, state: 'input-required' },
  );
}

/** The error a finished run maps to (plan error → 10, budget → 11, failed/canceled → 9), or none. */
export function runError(planId: string, r: FollowResult): CliError | undefined {
  if (r.unanswered && r.task) return approvalError(planId, r.task.id, r.unanswered);
  const state = r.task?.status.state;
  if (!state || state === 'TASK_STATE_COMPLETED') return undefined;
  const last = r.approvals.at(-1);
  if (state === 'TASK_STATE_CANCELED' && last?.request.kind === 'apply' && last.answer.decision === 'reject') {
    return new CliError(
      `apply declined: plan ${planId} was not applied and stays ready to apply`,
      'TASK_UNSUCCESSFUL',
      'ApplyDeclined',
      `apply it later with agents plan apply ${planId}`,
      { planId },
    );
  }
  const pe = r.planError;
  if (pe?.kind === 'conflict' || pe?.kind === 'dirty') {
    return new CliError(`Plan ${planId} was not applied: ${pe.message}`, 'PLAN_ERROR', 'PlanError', pe.hint, {
      planId,
      reason: pe.kind,
      files: pe.files ?? [],
    });
  }
  if (pe?.kind === 'budget')
    return new CliError(`Plan ${planId} stopped: ${pe.message}`, 'BUDGET_EXCEEDED', 'BudgetExceededError', pe.hint, {
      planId,
    });
  if (pe)
    return new CliError(`Plan ${planId} stopped: ${pe.message}`, 'TASK_UNSUCCESSFUL', 'PlanError', pe.hint, {
      planId,
      reason: pe.kind,
    });
  const why = textOf(r.task?.status.message);
  return new CliError(
    `Plan ${planId}: task ${r.task?.id ?? ''} ended ${stateWord(state)}${why ? `: ${why.split('\n')[0]}` : ''}`,
    'TASK_UNSUCCESSFUL',
    'TaskUnsuccessful',
    `see agents plan status ${planId}`,
    { planId },
  );
}
