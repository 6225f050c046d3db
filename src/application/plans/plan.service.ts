import { AppError } from '../../domain/errors.ts';
import { parseApprovalAnswer } from '../../domain/plan/approval.ts';
import { assertAllowed, cancelPlan, requeueExecute } from '../../domain/plan/plan-state.ts';
import { moveCursor, setBudget } from '../../domain/plan/plan-progress.ts';
import type { Plan } from '../../domain/plan/plan.ts';
import type { Principal } from '../ports/principal.ts';
import { waitingError, type PlanAccess } from './plan-access.service.ts';
import type { PlanAnswers } from './plan-answers.service.ts';
import { assertCostBudgetCounts } from './cost-budget-check.ts';
import type { PlanDrafts, UseInput } from './plan-drafts.service.ts';
import type { PlanHousekeeping } from './plan-housekeeping.service.ts';
import type { PlanQueries } from './plan-queries.service.ts';
import { settleInterruptedPlans, MISSING_TASK_GRACE_MS } from './plan-recovery.ts';
import type { PlanRuns } from './plan-runs.service.ts';
import { rollbackTarget, type RollbackInput } from './rollback-target.ts';
import type { PlanStatus } from './plan.views.ts';
import type { PlanServiceDeps, RunResult } from './plan.types.ts';

export type { CorrectInput, PlanListInput, PlanServiceDeps, RunResult } from './plan.types.ts';
export { GOAL_ACTION, type UseInput } from './plan-drafts.service.ts';

/** The plan services the lifecycle works with (each built once, by the composition root). */
export interface PlanLifecycleParts {
  access: PlanAccess;
  queries: PlanQueries;
  answers: PlanAnswers;
  housekeeping: PlanHousekeeping;
  runs: PlanRuns;
  drafts: PlanDrafts;
}

/**
 * The plan lifecycle behind the `_cleveragents/plan/…` methods that create a plan and move it
 * through its phases: use, execute, apply, prompt, rollback, cancel. Each phase runs on an A2A task
 * of the plan's context (PlanRuns). The read side (PlanQueries), answers to approvals
 * (PlanAnswers), corrections (PlanCorrections) and housekeeping (PlanHousekeeping) are services of
 * their own that the method table calls directly.
 */
export class PlanService {
  private readonly now: () => Date;
  private readonly deps: PlanServiceDeps;
  private readonly access: PlanAccess;
  private readonly queries: PlanQueries;
  private readonly answers: PlanAnswers;
  private readonly housekeeping: PlanHousekeeping;
  private readonly runs: PlanRuns;
  private readonly drafts: PlanDrafts;

  constructor(deps: PlanServiceDeps, parts: PlanLifecycleParts) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
    this.access = parts.access;
    this.queries = parts.queries;
    this.answers = parts.answers;
    this.housekeeping = parts.housekeeping;
    this.runs = parts.runs;
    this.drafts = parts.drafts;
  }

  /** Creates a plan (PlanDrafts checks and freezes its inputs) and strategizes it on its first task. */
  async use(input: UseInput, principal: Principal): Promise<RunResult> {
    const plan = await this.drafts.draft(input, principal);
    await this.admit(plan, principal);
    await this.deps.plans.create(plan);
    return this.runs.start(plan, 'strategize', principal, input.wait ?? true, (task) =>
      this.deps.engine.strategizeOn(plan.id, task),
    );
  }

  async execute(
    planRef: string,
    opts: {
      wait?: boolean | undefined;
      yes?: boolean | undefined;
      maxToolCalls?: number | undefined;
      maxWallSeconds?: number | undefined;
      maxTokens?: number | undefined;
      maxCost?: number | undefined;
    },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    this.access.assertIdle(plan, 'execute');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'execute');
    await this.deps.registry.assertMayApplyInto(plan.projects, principal);
    // Before anything changes: a refused budget leaves the plan as it was.
    await assertCostBudgetCounts(this.deps.registry, plan.actors, opts.maxCost);
    await this.deps.recorder.assertReachable(plan);
    await this.admit(plan, principal);
    if (plan.state === 'processing' && plan.phase === 'execute' && plan.tasks.execute) {
      // Nothing runs it any more: the agent stopped mid-run. Close that task and resume.
      await this.deps.tasks
        .fail(
          plan.tasks.execute,
          'Interrupted: the agent stopped while this ran; resumed from the last checkpoint in a new task',
          principal,
        )
        .catch(() => {});
    }
    setBudget(plan, {
      maxToolCalls: opts.maxToolCalls,
      maxWallMs: opts.maxWallSeconds ? opts.maxWallSeconds * 1000 : undefined,
      maxTokens: opts.maxTokens,
      maxCost: opts.maxCost,
    });
    await this.deps.recorder.save(plan);
    return this.runs.start(plan, 'execute', principal, opts.wait ?? false, (task) =>
      this.deps.engine.execute(planId, task, { yes: opts.yes ?? false }),
    );
  }

  async apply(
    planRef: string,
    opts: { yes?: boolean | undefined; wait?: boolean | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    this.access.assertIdle(plan, 'apply');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'apply');
    await this.deps.registry.assertMayApplyInto(plan.projects, principal);
    await this.deps.recorder.assertReachable(plan);
    // An apply runs as a turn of the user's but asks no model: their tokens do not hold it back.
    await this.deps.admission?.admitTurn(principal, 'concurrentTurns');
    const wait = opts.wait ?? true;
    const result = await this.runs.start(plan, 'apply', principal, wait, (task) =>
      this.deps.engine.apply(planId, task, { yes: opts.yes ?? false, by: principal }),
    );
    const after = result.plan;
    // Only a finished run of this apply speaks for its outcome (an earlier attempt's error may linger).
    if (
      wait &&
      result.task?.status.state === 'TASK_STATE_FAILED' &&
      after.error &&
      (after.error.kind === 'conflict' || after.error.kind === 'dirty')
    ) {
      throw new AppError('PLAN_ERROR', `Plan ${planId} was not applied: ${after.error.message}`, {
        details: { planId, kind: after.error.kind, files: after.error.files ?? [], taskId: result.taskId },
        hint: after.error.hint,
      });
    }
    return result;
  }

  /** Cancels; with `clean`, the plan's sandboxes and branches are removed too (the plan record stays). */
  async cancel(
    planRef: string,
    reason: string | undefined,
    principal: Principal,
    opts: { clean?: boolean | undefined } = {},
  ): Promise<PlanStatus> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    assertAllowed(plan, 'cancel');
    // Cleaning removes the sandboxes: on an instance that cannot reach them, refuse before the cancel.
    if (opts.clean) await this.deps.recorder.assertReachable(plan, { orGone: true });
    const current = plan.tasks[plan.phase];
    // The task first: its run stops (and reports nothing more) before the plan is cancelled.
    if (current) {
      try {
        await this.deps.tasks.cancel(current, principal);
      } catch (err) {
        if (!(err instanceof AppError && (err.reason === 'TASK_NOT_CANCELABLE' || err.reason === 'TASK_NOT_FOUND')))
          throw err;
      }
    }
    // Who, on a server (where another member or terminal may be following the plan); the local
    // user is the only one there is, so naming them says nothing.
    cancelPlan(plan, reason, principal.kind === 'local' ? undefined : principal.id);
    await this.deps.recorder.save(plan);
    if (opts.clean) await this.housekeeping.clean(plan);
    return this.queries.status(planId, principal);
  }

  /** Back to a checkpoint: named, or found from the plan with `steps` (see rollbackTarget). */
  async rollback(input: RollbackInput, principal: Principal): Promise<PlanStatus> {
    const { plan, checkpoint: cp } = await rollbackTarget(this.deps, this.access, input, principal);
    this.access.assertIdle(plan, 'rollback');
    assertAllowed(plan, 'rollback');
    await this.deps.recorder.assertReachable(plan);
    const waiting = plan.waiting;
    requeueExecute(plan);
    await this.deps.recorder.restore(plan, cp).catch((err: unknown) => {
      // A checkpoint from before a rebase sits on the old base: restoring it would undo the user's commits.
      throw new AppError(
        'INVALID_STATE',
        `Checkpoint ${cp.id} (${cp.label}) cannot be restored: ${err instanceof Error ? err.message : String(err)}`,
        {
          details: { planId: plan.id, checkpointId: cp.id },
          hint: `a checkpoint taken before agents plan rebase is on the old base; roll back to after-rebase or a later one (agents plan status ${plan.id})`,
        },
      );
    });
    moveCursor(plan, cp.stepIndex);
    await this.deps.recorder.save(plan);
    await this.answers.closeWaiting(
      waiting,
      plan,
      `The request this task waited for is gone: the plan was rolled back to checkpoint ${cp.id}`,
      principal,
    );
    return this.queries.status(plan.id, principal);
  }

  /**
   * Guidance for a plan that errored (recorded, then the phase runs again), or the answer to the
   * approval it waits for: a clear yes approves; anything else rejects, with the text as guidance.
   */
  async prompt(planRef: string, guidance: string, principal: Principal): Promise<RunResult> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    assertAllowed(plan, 'prompt');
    if (plan.waiting) return this.answers.answer(plan, parseApprovalAnswer({ text: guidance }), principal, true);
    this.access.assertIdle(plan, 'prompt');
    // What runs next with the guidance must be allowed before the guidance is recorded: a refusal changes nothing.
    const next = plan.phase === 'apply' ? 'apply' : plan.phase === 'strategize' && plan.actors ? undefined : 'execute';
    if (next) assertAllowed(plan, next);
    if (next) await this.deps.recorder.assertReachable(plan);
    // What runs next is a turn of the caller's: refused over their limits before the guidance is recorded.
    if (next === 'apply') await this.deps.admission?.admitTurn(principal, 'concurrentTurns');
    else await this.admit(plan, principal);
    await this.deps.recorder.record(plan, {
      type: 'guidance',
      question: 'Guidance from the user',
      chosen: guidance,
      rationale: guidance,
      context: { phase: plan.phase, state: plan.state, error: plan.error },
    });
    if (plan.phase === 'apply') return this.apply(planId, {}, principal);
    if (plan.phase === 'strategize' && plan.actors) {
      // The strategy actor failed (off the schema, a provider error): it strategizes again with the guidance.
      const live = (await this.deps.plans.decisions(plan.id)).filter(
        (d) => !d.superseded && (d.type === 'strategy' || d.type === 'choice'),
      );
      const fromIndex = live.filter((d) => d.type === 'choice').length;
      return this.runs.start(plan, 'strategize', principal, true, (task) =>
        this.deps.engine.replan(plan.id, task, { kept: live, fromIndex, guidance }),
      );
    }
    return this.execute(planId, {}, principal);
  }

  /**
   * Refuses a phase run over the limits of the user who starts it (a chat turn's refusal): their
   * running turns, and — when the plan's phases ask a model (a plan from a goal) — their tokens today.
   */
  private async admit(plan: Readonly<Plan>, principal: Principal): Promise<void> {
    await this.deps.admission?.admitTurn(principal, plan.actors ? undefined : 'concurrentTurns');
  }

  /** Settles plans a stopped process left `processing` (see settleInterruptedPlans). */
  settleInterrupted(
    isStranded: (taskId: string) => Promise<boolean | 'missing'>,
    graceMs = MISSING_TASK_GRACE_MS,
  ): Promise<string[]> {
    return settleInterruptedPlans(
      { plans: this.deps.plans, engine: this.deps.engine, now: this.now },
      isStranded,
      graceMs,
    );
  }
}
