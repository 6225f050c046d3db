import { createInterface } from 'node:readline/promises';
import {
  approvalWhat,
  followPlan,
  getTask,
  sendMessage,
  subscribeToTask,
  type A2AClient,
  type ApprovalAnswer,
  type ApprovalRequest,
  type Message,
  type PlanStop,
  type StreamResponse,
} from '../../../protocol/client/index.ts';
import { CliError } from '../exit-codes.ts';
import { renderDiff, type PlanStatus } from '../render/plan.render.ts';
import type { StreamedEvent } from '../render/stream.render.ts';
import { isTerminalState, stateWord } from '../render/task.render.ts';
import type { Ui } from '../render/ui.ts';
import type { RunContext } from '../runner.ts';

export interface FollowOptions {
  planId: string;
  /** Approve whatever the plan asks (--yes). */
  yes: boolean;
  /** Called with every event of the task's stream as it arrives (--events). */
  onEvent?: ((seq: number, event: StreamResponse) => void) | undefined;
}

/** Where following stopped, and every event on the way (the envelope's `events`). */
export interface FollowResult extends PlanStop {
  events: StreamedEvent[];
}

const textOf = (m: Message | undefined): string => (m?.parts ?? []).map((p) => p.text ?? '').join('');

/** The methods following a plan's task may call (see COMMAND_METHODS). */
export const FOLLOW_CALLS = [subscribeToTask, getTask, sendMessage] as const;

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
  const events: StreamedEvent[] = [];
  // A tool call's details arrive just before the progress line that reports it: they go under it.
  let detail = '';
  let words = '';
  const stop = await followPlan(client, taskId, ctx.signal, {
    event: (seq, event, status) => {
      events.push({ seq, event });
      opts.onEvent?.(seq, event);
      if ('artifactUpdate' in event) {
        detail += artifactDetail(event, ui);
        words += actorWords(event, ui);
      } else if ('statusUpdate' in event && status?.message) {
        // What the execution actor said before this line, as one dim paragraph.
        if (words.trim()) ui.out(`${ui.pal.dim(words.trim())}\n`);
        words = '';
      } else if ('statusUpdate' in event && status && isTerminalState(status.state))
        ui.out(`${styleLine(`Stopped: ${stateWord(status.state)}`, status.state, ui)}\n`);
    },
    message: (m, state) => {
      const text = textOf(m);
      if (text) ui.out(`${styleLine(text, state, ui)}\n`);
      ui.out(detail);
      detail = '';
    },
    streamEnded: () => {
      ui.out(detail);
      detail = '';
    },
    decide: (request) => decide(ctx, request, opts),
    lost: (err) => connectionLost(opts.planId, taskId, err),
  });
  return { ...stop, events };
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
    `plan ${planId} needs approval for ${approvalWhat(r)}; run again with --yes, or answer with agents plan approve ${planId} or agents plan reject ${planId} (a plan made with agents plan use … --automation-profile auto does not ask)`,
    'INVALID_STATE',
    'ApprovalRequired',
    `approve: agents plan approve ${planId} · reject: agents plan reject ${planId} --guidance "…" (or agents send --task ${taskId} no) · see it: agents plan status ${planId}`,
    { planId, taskId, approvalRequest: r, state: 'input-required' },
  );
}

/**
 * A plan cancelled while this command followed it (`agents plan cancel` from another terminal):
 * said as such, with the reason it was given, exit 9 as for any task that ended canceled.
 */
export function cancelledError(s: Pick<PlanStatus, 'planId' | 'phase' | 'error'>): CliError {
  // cancelPlan stores "cancelled", "cancelled by <user>", each with ": <reason>" when one was given.
  const by = s.error?.cancelledBy;
  const head = by ? `cancelled by ${by}` : 'cancelled';
  const message = s.error?.message ?? '';
  const why = message.startsWith(head) ? message.slice(head.length).replace(/^:?\s*/, '') : message;
  return new CliError(
    `plan ${s.planId} was cancelled${by ? ` by ${by}` : ''} during its ${s.phase} phase${why ? `: ${why}` : ''}`,
    'TASK_UNSUCCESSFUL',
    'PlanCancelled',
    `see where it stopped with agents plan status ${s.planId}; agents plan delete ${s.planId} removes it and its sandbox`,
    { planId: s.planId, state: 'cancelled', ...(by ? { cancelledBy: by } : {}) },
  );
}

/**
 * Ctrl-C while following a phase. A local agent lives as long as this command, so the phase stops
 * with it and resumes from its last checkpoint on the next run; a server's phase goes on.
 */
export function interruptedError(s: Pick<PlanStatus, 'planId' | 'phase'>, local: boolean): CliError {
  const id = s.planId;
  const resume: Record<PlanStatus['phase'], string> = {
    strategize: `agents plan status ${id} shows it; if it did not finish, make the plan again with agents plan use`,
    execute: `resume it with agents plan execute ${id} (it goes on from its last checkpoint)`,
    apply: `try the apply again with agents plan apply ${id}`,
  };
  return local
    ? new CliError(
        `plan ${id}: its ${s.phase} phase stopped with the local agent`,
        'INTERRUPTED',
        'PlanInterrupted',
        resume[s.phase],
        { planId: id },
      )
    : new CliError(
        `stopped following plan ${id}; its ${s.phase} phase goes on on the server`,
        'INTERRUPTED',
        'PlanInterrupted',
        `follow it again with agents plan status ${id}, or stop it with agents plan cancel ${id}`,
        { planId: id },
      );
}

/** The error a finished run maps to (plan error → 10, budget → 11, failed/canceled → 9), or none. */
export function runError(planId: string, r: PlanStop): CliError | undefined {
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
