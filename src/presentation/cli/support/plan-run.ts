import {
  StoredDiff,
  planStatus,
  planTree,
  type A2AClient,
  type planUse,
  type ResultOf,
  type StreamResponse,
  type Task,
} from '../../../protocol/client/index.ts';
import { lastCommandFields } from '../render/command-output.render.ts';
import { plural } from '../render/definition.render.ts';
import {
  chosenText,
  commandLines,
  phaseState,
  type Decision,
  type DiffStats,
  type PlanStatus,
} from '../render/plan.render.ts';
import { renderFields } from '../render/table.ts';
import type { Ui } from '../render/ui.ts';
import type { Outcome, RunContext } from '../runner.ts';
import type { EventLines } from './events.ts';
import {
  cancelledError,
  FOLLOW_CALLS,
  followPlanTask,
  interruptedError,
  runError,
  type FollowResult,
} from './plan-follow.ts';

/** What the run methods (use, execute, apply, prompt, approve, reject) return. */
export type RunStart = ResultOf<typeof planUse>;

/** The methods a phase command may call besides its own (runPhase, waitingRun): following the task, the plan's status. */
export const PHASE_CALLS = [...FOLLOW_CALLS, planStatus] as const;

/**
 * A plan that already waits for the approval this command would ask for (a tool call for
 * execute, the apply for apply) is resumed by answering on its task, not started again.
 */
export async function waitingRun(
  ctx: { signal: AbortSignal; ui: Pick<Ui, 'info'> },
  client: A2AClient,
  planId: string,
  kind: 'tool-approval' | 'apply-approval',
): Promise<RunStart | undefined> {
  const s = await client.call(planStatus, { planId }, { signal: ctx.signal });
  const w = s.waiting;
  if (w?.kind !== kind) return undefined;
  ctx.ui.info(`plan ${planId} waits for an answer on task ${w.taskId}: answering it`);
  return { plan: s, taskId: w.taskId };
}

/** The command that makes sense next, from what the plan allows. */
export function nextCommands(s: PlanStatus): string[] {
  const id = s.planId;
  if (s.waiting)
    return [`agents plan approve ${id}`, `agents plan reject ${id} --guidance "…"`, `agents plan status ${id}`];
  if (s.state === 'applied') return [`agents plan status ${id}`, `agents plan tree ${id}`];
  const out: string[] = [];
  // A conflict with the moved target branch: rebase (after a failed apply), or finish the rebase
  // (nothing to execute or apply until its conflicts are resolved).
  const rebaseConflict = s.error?.kind === 'conflict' && s.phase === 'execute';
  if (s.error?.kind === 'conflict' && s.allowed.includes('rebase'))
    out.push(rebaseConflict ? `agents plan rebase ${id} --continue` : `agents plan rebase ${id}`);
  if (s.phase === 'execute' && s.state === 'complete') out.push(`agents plan diff ${id}`, `agents plan apply ${id}`);
  else if (rebaseConflict) out.push(`agents plan diff ${id}`);
  else if (s.allowed.includes('execute')) out.push(`agents plan execute ${id}`);
  else if (s.allowed.includes('apply')) out.push(`agents plan apply ${id}`);
  // Guidance reaches an actor: a stepped action (no actors) runs the same fixed steps again, so
  // for it the way on is execute (the cause fixed) or a new plan with other arguments.
  if ((s.state === 'errored' || s.state === 'constrained') && s.allowed.includes('prompt')) {
    if (s.actors) out.push(`agents plan prompt ${id} "…"`);
    else if (s.state === 'errored') out.push(`agents plan use ${s.action} ${s.projects.join(' ')} --arg NAME=VALUE …`);
  }
  if (out.length === 0) out.push(`agents plan status ${id}`);
  return out;
}

/** The diff stats an execute task published in its `diff` artifact. */
export function diffStatsOf(task: Task | undefined): DiffStats | undefined {
  const a = task?.artifacts?.find((x) => x.artifactId === 'diff');
  const data = StoredDiff.safeParse(a?.parts.find((p) => p.data !== undefined)?.data);
  return data.success ? data.data.stats : undefined;
}

/** The end of a run for people: where the plan is, what changed, what to do next. */
export function renderRunSummary(s: PlanStatus, task: Task | undefined, ui: Ui): string {
  const stats = diffStatsOf(task);
  const applied = s.applied?.commits ?? [];
  const fields: Array<readonly [string, string | undefined]> = [
    ['steps', `${s.progress.stepsDone}/${s.progress.stepsTotal}`],
    ['changed', stats ? `${plural(stats.files, 'file')} (+${stats.additions} -${stats.deletions})` : undefined],
    ...applied.map(
      (c) => ['commit', `${c.resource}: ${c.commit ?? 'none'} (${plural(c.files.length, 'file')})`] as const,
    ),
    // A command that failed the run: what it said is the first thing to read.
    ...(s.state === 'errored' && s.lastCommand && !s.lastCommand.ok ? lastCommandFields(s, ui) : []),
    ['next', nextCommands(s).join(ui.rich ? '  ·  ' : ' ; ')],
  ];
  if (!ui.rich) return renderFields([['plan', s.planId], ['phase', s.phase], ['state', s.state], ...fields], ui.mode);
  return `${ui.pal.bold('Plan')} ${s.planId}  ${phaseState(s, ui.pal)}\n${renderFields(fields, ui.mode)}`;
}

/** The steps a strategize decided on, in order (active decisions only). */
export async function stepDecisions(client: A2AClient, planId: string, signal: AbortSignal): Promise<Decision[]> {
  const tree = await client.call(planTree, { planId }, { signal });
  const out: Decision[] = [];
  const walk = (d: Decision): void => {
    if (d.type === 'step' || d.type === 'choice') out.push(d);
    for (const c of d.children) walk(c);
  };
  for (const d of tree.decisions) walk(d);
  return out.sort((a, b) => (a.stepIndex ?? 0) - (b.stepIndex ?? 0));
}

/** The plan as `use` leaves it: what it will do, step by step. */
export function renderStrategy(s: PlanStatus, steps: Decision[], ui: Ui): string {
  const fields: Array<readonly [string, string | undefined]> = [
    ['description', s.description],
    ['done when', s.definitionOfDone],
    ['profile', s.automationProfile],
    ...commandLines(s, ui),
    ...(s.actors ? ([['actors', `strategy ${s.actors.strategy}, execution ${s.actors.execution}`]] as const) : []),
    ...steps.map((d) => {
      const label = d.type === 'choice' ? 'decision' : 'step';
      const what = d.type === 'choice' ? `${d.question} → ${chosenText(d.chosen)}` : chosenText(d.chosen);
      return [
        ui.rich ? `${label} ${(d.stepIndex ?? 0) + 1}` : label,
        ui.rich
          ? `${what} ${ui.pal.dim(`(${d.type === 'choice' ? `confidence ${d.confidence}, ` : ''}decision ${d.id})`)}`
          : `${(d.stepIndex ?? 0) + 1} ${d.id} ${what}`,
      ] as const;
    }),
    ['next', nextCommands(s).join(ui.rich ? '  ·  ' : ' ; ')],
  ];
  if (!ui.rich) return renderFields([['plan', s.planId], ['phase', s.phase], ['state', s.state], ...fields], ui.mode);
  return `${ui.pal.bold('Plan')} ${s.planId}  ${phaseState(s, ui.pal)}\n${renderFields(fields, ui.mode)}`;
}

export interface PhaseRun {
  follow: FollowResult;
  status: PlanStatus;
  taskId: string;
  error?: unknown;
}

/**
 * Starts a phase (the method is called with wait: false), follows its task live to the end —
 * answering approvals as allowed — and reads the plan's status afterwards.
 */
export async function runPhase(
  ctx: RunContext,
  client: A2AClient,
  start: () => Promise<RunStart>,
  opts: { yes: boolean; events?: EventLines | undefined },
): Promise<PhaseRun> {
  const started = await start();
  const planId = started.plan.planId;
  const lines = opts.events;
  lines?.phase(started.plan);
  let follow: FollowResult;
  try {
    follow = await followPlanTask(ctx, client, started.taskId, {
      planId,
      yes: opts.yes,
      ...(lines ? { onEvent: (seq: number, event: StreamResponse) => lines.event(seq, event) } : {}),
    });
  } catch (err) {
    if (ctx.signal.aborted) throw interruptedError(started.plan, ctx.target.kind === 'local');
    throw err;
  }
  if (ctx.signal.aborted) throw interruptedError(started.plan, ctx.target.kind === 'local');
  let status = await client.call(planStatus, { planId }, { signal: ctx.signal });
  // Cancelled from elsewhere (`agents plan cancel`): the task ends before the canceller stores the
  // plan as cancelled, so the plan may still read `processing` here for a moment.
  if (follow.task?.status.state === 'TASK_STATE_CANCELED' && status.state === 'processing')
    status = await settledStatus(client, planId, ctx.signal, status);
  lines?.phase(status);
  const run: PhaseRun = { follow, status, taskId: started.taskId };
  const err = status.state === 'cancelled' ? cancelledError(status) : runError(planId, follow);
  if (err) run.error = err;
  return run;
}

/** The plan's status once it has left `processing` (read again for up to a few seconds), else as it was. */
async function settledStatus(
  client: A2AClient,
  planId: string,
  signal: AbortSignal,
  first: PlanStatus,
): Promise<PlanStatus> {
  let status = first;
  for (let i = 0; i < 50 && status.state === 'processing'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = await client.call(planStatus, { planId }, { signal });
  }
  return status;
}

/** The envelope of a run command: the plan, its task and every event (and the error, if any). */
export function runOutcome(run: PhaseRun, extra: Record<string, unknown> = {}): Outcome {
  const data = {
    plan: run.status,
    taskId: run.taskId,
    task: run.follow.task ?? null,
    approvals: run.follow.approvals,
    events: run.follow.events,
    ...extra,
  };
  return run.error ? { data, error: run.error } : { data };
}
