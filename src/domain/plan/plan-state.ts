/**
 * What may be asked of a plan in each phase/state, and the state machine that moves its phase and
 * state (DESIGN.md §4.3): each move is checked against one transition table and an illegal one is
 * refused. The rest of a plan (cursor, attempt, budget, usage, sandboxes) changes through
 * plan-progress.ts.
 */
import { AppError } from '../errors.ts';
import type { Phase, PhaseState, Plan, PlanError, PlanRecord, Waiting } from './plan.ts';
import { writable } from './writable.ts';

/** What may be asked of a plan, and in which phases/states. */
export const PLAN_OPERATIONS = [
  'execute',
  'apply',
  'correct',
  'rollback',
  'prompt',
  'approve',
  'reject',
  'cancel',
  'rebase',
] as const;
export type PlanOperation = (typeof PLAN_OPERATIONS)[number];

const ALLOWED: Record<PlanOperation, (p: Plan) => boolean> = {
  // Not on a rebase conflict: resuming would restore the checkpoint with the markers and complete.
  execute: (p) =>
    (p.phase === 'strategize' && p.state === 'complete') ||
    // A strategy actor stopped by a budget: execute (with a larger one) strategizes first.
    (p.phase === 'strategize' && p.state === 'constrained' && p.actors !== undefined) ||
    (p.phase === 'execute' &&
      ['queued', 'errored', 'constrained', 'processing'].includes(p.state) &&
      // A rebase conflict: a goal plan's execution actor resolves it; a stepped plan needs a person.
      (!isRebaseConflict(p) || p.actors !== undefined)),
  apply: (p) =>
    (p.phase === 'execute' && p.state === 'complete') ||
    (p.phase === 'apply' && ['errored', 'queued', 'processing'].includes(p.state)),
  correct: (p) =>
    p.state !== 'applied' && p.state !== 'cancelled' && !(p.phase === 'apply' && p.state === 'processing'),
  rollback: (p) => p.state !== 'applied' && p.state !== 'cancelled' && p.sandboxes.length > 0,
  prompt: (p) => p.state === 'errored' || p.state === 'constrained' || p.waiting !== undefined,
  approve: (p) => p.waiting !== undefined && !isFinished(p),
  reject: (p) => p.waiting !== undefined && !isFinished(p),
  cancel: (p) => p.state !== 'applied' && p.state !== 'cancelled',
  rebase: (p) =>
    p.sandboxes.length > 0 &&
    p.waiting === undefined &&
    ((p.phase === 'execute' && p.state === 'complete') ||
      (p.phase === 'apply' && (p.state === 'errored' || p.state === 'constrained')) ||
      isRebaseConflict(p)),
};

const WHAT: Record<PlanOperation, string> = {
  execute:
    'execute needs a completed strategize, or an execute that errored, hit a constraint or was interrupted (and no rebase conflict left to resolve)',
  apply: 'apply needs a completed execute (or an apply that errored)',
  correct: 'correct works until the plan is applied or cancelled',
  rollback: 'rollback needs a sandbox and a plan not yet applied or cancelled',
  prompt: 'prompt needs a plan that errored or waits for input',
  approve: 'approve needs a plan that waits for an approval',
  reject: 'reject needs a plan that waits for an approval',
  cancel: 'cancel works until the plan is applied or cancelled',
  rebase: 'rebase needs a sandbox and a plan that finished executing (or whose apply or rebase failed)',
};

/** Refuses an operation the plan's phase and state do not allow, naming both and what is allowed. */
export function assertAllowed(p: Plan, op: PlanOperation): void {
  if (ALLOWED[op](p)) return;
  const now = allowedOperations(p);
  throw new AppError(
    'INVALID_STATE',
    `Plan ${p.id} is ${p.phase}/${p.state}${p.waiting ? ` (waiting for ${p.waiting.kind})` : ''}: ${WHAT[op]}`,
    {
      details: { planId: p.id, phase: p.phase, state: p.state, operation: op, allowed: now },
      hint: now.length ? `allowed now: ${now.join(', ')}` : 'nothing more can be done with this plan',
    },
  );
}

export function isAllowed(p: Plan, op: PlanOperation): boolean {
  return ALLOWED[op](p);
}

/** Every operation the plan allows now, in a stable order. */
export function allowedOperations(p: Plan): PlanOperation[] {
  return (Object.keys(ALLOWED) as PlanOperation[]).filter((o) => ALLOWED[o](p));
}

// ---- the state machine ---------------------------------------------------------------------------
//
// A plan's (phase, state) changes only through the functions below, each checked against one
// transition table. An illegal move is a programming error or a stale request: it is refused as
// INVALID_STATE and changes nothing.

export type PhaseStatus = `${Phase}/${PhaseState}`;

const REWORK: readonly PhaseStatus[] = ['strategize/processing', 'execute/queued'];
const TRANSITIONS: Readonly<Partial<Record<PhaseStatus, readonly PhaseStatus[]>>> = {
  'strategize/queued': ['strategize/processing'],
  // processing → processing: a run resumed after its agent stopped.
  'strategize/processing': [
    'strategize/processing',
    'strategize/complete',
    'strategize/errored',
    'strategize/constrained',
    'execute/queued',
  ],
  'strategize/complete': ['strategize/processing', 'execute/processing', 'execute/queued'],
  'strategize/errored': ['strategize/processing', 'execute/queued'],
  'strategize/constrained': ['strategize/processing'],
  'execute/queued': ['execute/processing', ...REWORK],
  'execute/processing': ['execute/processing', 'execute/complete', 'execute/errored', 'execute/constrained', ...REWORK],
  // execute/complete → execute/errored: a rebase onto the moved target branch conflicted.
  'execute/complete': ['apply/queued', 'apply/processing', 'execute/errored', ...REWORK],
  // → execute/complete: the rebase conflict was resolved; → execute/errored: a rebase conflicted again.
  'execute/errored': ['execute/processing', 'execute/complete', 'execute/errored', ...REWORK],
  'execute/constrained': ['execute/processing', ...REWORK],
  // apply/queued: waiting for the approval; declining it goes back to execute/complete.
  'apply/queued': ['apply/queued', 'apply/processing', 'execute/complete', ...REWORK],
  'apply/processing': ['apply/processing', 'apply/queued', 'apply/applied', 'apply/errored', 'execute/queued'],
  // A failed apply, rebased: clean → ready to apply again (execute/complete); conflicted → execute/errored.
  'apply/errored': ['apply/queued', 'apply/processing', 'execute/complete', 'execute/errored', ...REWORK],
  'apply/constrained': ['apply/queued', 'apply/processing', 'execute/complete', 'execute/errored', ...REWORK],
};

const statusOfPlan = (p: Plan): PhaseStatus => `${p.phase}/${p.state}`;

/** Applied or cancelled: nothing more happens to the plan. */
function isFinished(p: Plan): boolean {
  return p.state === 'applied' || p.state === 'cancelled';
}

/** Whether the table lets a plan move from one phase/state to another (cancel: from anything unfinished). */
export function canMove(from: PhaseStatus, to: PhaseStatus): boolean {
  const [, state] = from.split('/') as [Phase, PhaseState];
  if (to.endsWith('/cancelled'))
    return state !== 'applied' && state !== 'cancelled' && to.split('/')[0] === from.split('/')[0];
  return TRANSITIONS[from]?.includes(to) ?? false;
}

function move(p: Plan, phase: Phase, state: PhaseState): void {
  const w = writable(p);
  const from = statusOfPlan(p);
  const to: PhaseStatus = `${phase}/${state}`;
  if (!canMove(from, to)) {
    const next = [...(TRANSITIONS[from] ?? [])];
    throw new AppError('INVALID_STATE', `Plan ${p.id} cannot go from ${from} to ${to}`, {
      details: { planId: p.id, phase: p.phase, state: p.state, to, allowed: next },
      hint: next.length ? `from ${from} a plan goes to: ${next.join(', ')}` : 'nothing more can be done with this plan',
    });
  }
  w.phase = phase;
  w.state = state;
}

/** A phase starts (or resumes) running. */
export function startPhase(p: Plan, phase: Phase): void {
  const w = writable(p);
  move(p, phase, 'processing');
  w.error = undefined;
}

/** The running phase finished its work. */
export function completePhase(p: Plan): void {
  move(p, p.phase, 'complete');
}

/** A phase stopped on an error (`constrained`: a budget or another limit). */
export function failPhase(p: Plan, phase: Phase, error: PlanError, state: 'errored' | 'constrained' = 'errored'): void {
  const w = writable(p);
  move(p, phase, state);
  w.error = error;
}

/** The run asks the user (a tool call while executing, or the apply); it resumes on the answer. */
export function awaitAnswer(p: Plan, waiting: Waiting): void {
  const w = writable(p);
  if (waiting.kind === 'apply-approval') move(p, 'apply', 'queued');
  else if (p.phase !== 'execute' || p.state !== 'processing') move(p, 'execute', 'processing');
  w.waiting = waiting;
}

/** Takes the request an answer on `taskId` answers; refuses when that task is not the one waiting. */
export function takeAnswer(p: Plan, taskId: string): NonNullable<Plan['waiting']> {
  const w = p.waiting;
  if (!w || w.taskId !== taskId || isFinished(p)) {
    throw new AppError(
      'INVALID_STATE',
      w
        ? `Plan ${p.id} waits for an answer on task ${w.taskId}, not on task ${taskId}`
        : `Plan ${p.id} (${p.phase}/${p.state}) waits for no answer`,
      {
        details: {
          planId: p.id,
          phase: p.phase,
          state: p.state,
          taskId,
          waitingTaskId: w?.taskId ?? null,
          allowed: allowedOperations(p),
        },
        hint: `see agents plan status ${p.id}`,
      },
    );
  }
  writable(p).waiting = undefined;
  return w;
}

/** The user declined the apply: the plan stays ready to apply. */
export function declineApply(p: Plan): void {
  const w = writable(p);
  move(p, 'execute', 'complete');
  w.waiting = undefined;
}

/** The changes landed in the project. */
export function markApplied(p: Plan, applied: NonNullable<PlanRecord['applied']>): void {
  const w = writable(p);
  move(p, 'apply', 'applied');
  w.applied = applied;
  w.sandboxes = [];
}

/** Back to execute, queued at the cursor (after a rollback or a correction that keeps the sandbox). */
export function requeueExecute(p: Plan): void {
  const w = writable(p);
  move(p, 'execute', 'queued');
  w.error = undefined;
  w.waiting = undefined;
}

/**
 * Whether the plan stopped on a rebase that conflicted: execute/errored, kind `conflict` (the
 * sandbox holds the plan's changes on the new base, with conflict markers in `error.files`).
 */
export function isRebaseConflict(p: Plan): boolean {
  return p.phase === 'execute' && p.state === 'errored' && p.error?.kind === 'conflict';
}

/**
 * The sandboxes are on the target branch's current head (a clean rebase, or its conflicts resolved):
 * a plan whose apply failed, or whose rebase conflicted, is ready to apply again; any other plan
 * stays where it is.
 */
export function markRebased(p: Plan): void {
  const w = writable(p);
  if (p.phase === 'apply' || isRebaseConflict(p)) {
    move(p, 'execute', 'complete');
    w.error = undefined;
  }
}

/** The rebase conflicted: the plan stops errored until the conflicts are resolved (by hand or by the actor). */
export function markRebaseConflict(p: Plan, error: PlanError): void {
  const w = writable(p);
  move(p, 'execute', 'errored');
  w.error = error;
}

/** Stops the plan for good (the sandbox stays for inspection). */
export function cancelPlan(p: Plan, reason: string | undefined, by?: string): void {
  const w = writable(p);
  move(p, p.phase, 'cancelled');
  w.waiting = undefined;
  w.error = {
    kind: 'internal',
    message: `cancelled${by ? ` by ${by}` : ''}${reason ? `: ${reason}` : ''}`,
    recoverable: false,
    ...(by ? { cancelledBy: by } : {}),
  };
}
