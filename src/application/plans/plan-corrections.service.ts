import { AppError } from '../../domain/errors.ts';
import type { Checkpoint, Decision, Plan } from '../../domain/plan/plan.ts';
import { assertAllowed, requeueExecute } from '../../domain/plan/plan-state.ts';
import type { Correction } from '../../domain/plan/plan-views.ts';
import type { Principal } from '../ports/principal.ts';
import type { Replan } from './llm/strategize-llm.phase.ts';
import type { PlanAccess } from './plan-access.service.ts';
import type { PlanAnswers } from './plan-answers.service.ts';
import type { PlanRuns } from './plan-runs.service.ts';
import { strategize } from './strategize.phase.ts';
import type { CorrectInput, PlanServiceDeps } from './plan.types.ts';
import { moveCursor, newAttempt, revertTo } from '../../domain/plan/plan-progress.ts';

/** What a correction touches: the decisions it supersedes, the checkpoint it restores, where work resumes. */
interface Scope {
  affected: Decision[];
  restoreTo: Checkpoint | undefined;
  /** The step (stepped) or choice (goal) index work starts again from. */
  from: number;
}

/**
 * Corrections of a plan's decision tree (`plan correct`): `append` adds the user's guidance under a
 * decision (a plan from a goal gives it to its execution actor for the rest of the run); `revert`
 * supersedes the decision and everything after it, restores the sandbox to the checkpoint before
 * it, and strategizes again from there with the guidance — a plan from a goal asks its strategy
 * actor to decide again following the guidance (on a new task, PlanRuns); a stepped action records
 * the guidance but its fixed steps stay what they are. A plan with a sandbox goes back to
 * execute/queued. A dry run says what would happen and changes nothing.
 */
export class PlanCorrections {
  private readonly deps: Pick<PlanServiceDeps, 'plans' | 'engine' | 'recorder' | 'registry' | 'admission'>;
  private readonly access: PlanAccess;
  private readonly answers: PlanAnswers;
  private readonly runs: PlanRuns;

  constructor(
    deps: Pick<PlanServiceDeps, 'plans' | 'engine' | 'recorder' | 'registry' | 'admission'>,
    access: PlanAccess,
    answers: PlanAnswers,
    runs: PlanRuns,
  ) {
    this.deps = deps;
    this.access = access;
    this.answers = answers;
    this.runs = runs;
  }

  async correct(input: CorrectInput, principal: Principal, planId?: string): Promise<Correction> {
    const { plan, decision, all } = await this.access.findDecision(input.decisionId, principal, planId);
    this.access.assertIdle(plan, 'correct');
    assertAllowed(plan, 'correct');
    if (decision.superseded)
      throw new AppError('INVALID_STATE', `Decision ${decision.id} is already superseded`, {
        hint: `see the current tree with agents plan tree ${plan.id}`,
      });
    if (plan.actors) return this.correctGoal(plan, decision, all, input, principal);
    const note = `Action ${plan.action} declares its steps: the guidance is recorded, but it cannot change fixed steps`;
    const scope = await this.steppedScope(plan, decision, all, input);
    if (input.dryRun)
      return input.mode === 'append'
        ? {
            planId: plan.id,
            mode: 'append',
            dryRun: true,
            attempt: plan.attempt,
            wouldSupersede: [],
            wouldAdd: 'one guidance decision',
            note,
          }
        : {
            planId: plan.id,
            mode: input.mode,
            dryRun: true,
            attempt: plan.attempt,
            wouldSupersede: scope.affected.map((d) => d.id),
            wouldRestoreCheckpoint: scope.restoreTo?.id,
            wouldResumeAtStep: scope.from + 1,
            note,
          };
    if (input.mode === 'revert' && scope.restoreTo) await this.deps.recorder.assertReachable(plan);
    // A revert has the strategy actor decide again, a turn of the caller's: refused before anything changes.
    if (input.mode === 'revert') await this.deps.admission?.admitTurn(principal);
    newAttempt(plan);
    const guidance = await this.guidance(plan, decision, input);
    if (input.mode === 'append') {
      await this.deps.recorder.save(plan);
      return { planId: plan.id, mode: 'append', attempt: plan.attempt, added: [guidance.id], superseded: [], note };
    }
    const made = await this.revertStepped(plan, decision, scope, input.guidance, principal);
    return {
      planId: plan.id,
      mode: 'revert',
      attempt: plan.attempt,
      superseded: scope.affected.map((d) => d.id),
      added: [guidance.id, ...made.map((d) => d.id)],
      restoredCheckpoint: scope.restoreTo?.id,
      resumeAtStep: scope.from + 1,
      note,
    };
  }

  /** A stepped plan: the decision, the steps from its step on, and the checkpoint at or before that step. */
  private async steppedScope(plan: Plan, decision: Decision, all: Decision[], input: CorrectInput): Promise<Scope> {
    const from = decision.type === 'step' ? (decision.stepIndex ?? 0) : 0;
    const affected =
      input.mode === 'append'
        ? []
        : all.filter(
            (d) =>
              !d.superseded &&
              (d.id === decision.id ||
                (d.type !== 'strategy' && (d.stepIndex ?? stepOfParent(all, d)) >= from) ||
                (decision.type === 'strategy' && d.type !== 'guidance')),
          );
    const checkpoints = await this.deps.plans.checkpoints(plan.id);
    const restoreTo = plan.sandboxes.length ? checkpoints.filter((c) => c.stepIndex <= from).at(-1) : undefined;
    return { affected, restoreTo, from };
  }

  /** Supersedes, restores and strategizes the declared steps again from `scope.from` (with the guidance). */
  private async revertStepped(
    plan: Plan,
    decision: Decision,
    scope: Scope,
    guidance: string,
    principal: Principal,
  ): Promise<Decision[]> {
    const waiting = plan.waiting;
    for (const d of scope.affected) await this.deps.plans.putDecision({ ...d, superseded: true });
    if (scope.restoreTo) await this.deps.recorder.restore(plan, scope.restoreTo);
    revertTo(plan, Math.min(plan.cursor, scope.from));
    const made = await strategize(this.deps, plan, undefined, decision.type === 'strategy' ? 0 : scope.from, guidance);
    if (plan.sandboxes.length) requeueExecute(plan);
    await this.deps.recorder.save(plan);
    await this.answers.closeWaiting(
      waiting,
      plan,
      'The request this task waited for was superseded by a correction of the plan',
      principal,
    );
    return made;
  }

  /**
   * A plan from a goal: `append` keeps the guidance for the execution actor; `revert` supersedes the
   * decision, the choices after it and any assessment, restores the sandbox to before execute, and
   * has the strategy actor decide again from there following the guidance.
   */
  private async correctGoal(
    plan: Plan,
    decision: Decision,
    all: Decision[],
    input: CorrectInput,
    principal: Principal,
  ): Promise<Correction> {
    if (input.mode === 'revert' && decision.type !== 'strategy' && decision.type !== 'choice')
      throw new AppError(
        'INVALID_PARAMS',
        `Decision ${decision.id} is a ${decision.type}: only the strategy and its choices can be reverted`,
        {
          fields: [{ field: 'decisionId', description: 'a strategy or choice decision (see agents plan tree)' }],
          hint: `give guidance for the rest of the run with --mode append, or revert a choice: agents plan tree ${plan.id}`,
        },
      );
    const live = all.filter((d) => !d.superseded);
    const scope = await this.goalScope(plan, decision, live, input);
    if (input.dryRun)
      return {
        planId: plan.id,
        mode: input.mode,
        dryRun: true,
        attempt: plan.attempt,
        wouldSupersede: scope.affected.map((d) => d.id),
        wouldAdd:
          input.mode === 'append'
            ? 'one guidance decision, given to the execution actor for the rest of the run'
            : `one guidance decision, then the strategy actor decides again from decision ${scope.from + 1} on`,
        ...(input.mode === 'revert' && scope.restoreTo ? { wouldRestoreCheckpoint: scope.restoreTo.id } : {}),
      };
    if (input.mode === 'revert' && scope.restoreTo) await this.deps.recorder.assertReachable(plan);
    newAttempt(plan);
    const guidance = await this.guidance(plan, decision, input);
    if (input.mode === 'append') {
      await this.deps.recorder.save(plan);
      return { planId: plan.id, mode: 'append', attempt: plan.attempt, added: [guidance.id], superseded: [] };
    }
    const kept = live.filter((d) => !scope.affected.includes(d) && (d.type === 'strategy' || d.type === 'choice'));
    const taskId = await this.replan(plan, scope, principal, {
      kept,
      fromIndex: scope.from,
      guidance: input.guidance,
      corrected: decision,
    });
    const after = await this.deps.plans.decisions(plan.id);
    const added = after.filter(
      (d) => !d.superseded && d.attempt === plan.attempt && (d.type === 'strategy' || d.type === 'choice'),
    );
    return {
      planId: plan.id,
      mode: 'revert',
      attempt: plan.attempt,
      superseded: scope.affected.map((d) => d.id),
      added: [guidance.id, ...added.map((d) => d.id)],
      ...(scope.restoreTo ? { restoredCheckpoint: scope.restoreTo.id } : {}),
      taskId,
    };
  }

  /** A plan from a goal: the decision, the choices from it on and any assessment; the checkpoint before execute. */
  private async goalScope(plan: Plan, decision: Decision, live: Decision[], input: CorrectInput): Promise<Scope> {
    const from = decision.type === 'strategy' ? 0 : (decision.stepIndex ?? 0);
    const affected =
      input.mode === 'append'
        ? []
        : live.filter(
            (d) =>
              d.id === decision.id ||
              d.type === 'assessment' ||
              (d.type === 'choice' && (d.stepIndex ?? 0) >= from) ||
              (decision.type === 'strategy' && d.type === 'strategy'),
          );
    const checkpoints = await this.deps.plans.checkpoints(plan.id);
    // The work was done from the whole strategy: a re-plan starts execute again from its beginning.
    const restoreTo = plan.sandboxes.length ? checkpoints.find((c) => c.label === 'before-execute') : undefined;
    return { affected, restoreTo, from };
  }

  /** Supersedes and restores, then runs the strategy actor again on a new task (waiting for it); its task id. */
  private async replan(plan: Plan, scope: Scope, principal: Principal, replan: Replan): Promise<string> {
    const waiting = plan.waiting;
    // What it waited for is superseded before anything else happens (the restore may take a while).
    revertTo(plan, plan.cursor, { fresh: true });
    for (const d of scope.affected) await this.deps.plans.putDecision({ ...d, superseded: true });
    if (scope.restoreTo) await this.deps.recorder.restore(plan, scope.restoreTo);
    moveCursor(plan, 0);
    await this.deps.recorder.save(plan);
    await this.answers.closeWaiting(
      waiting,
      plan,
      'The request this task waited for was superseded by a correction of the plan',
      principal,
    );
    const run = await this.runs.start(plan, 'strategize', principal, true, (task) =>
      this.deps.engine.replan(plan.id, task, replan),
    );
    return run.taskId;
  }

  private guidance(plan: Plan, decision: Decision, input: CorrectInput): Promise<Decision> {
    return this.deps.recorder.record(plan, {
      type: 'guidance',
      parentId: input.mode === 'append' ? decision.id : decision.parentId,
      question: `Correction (${input.mode}) of ${decision.id}`,
      chosen: input.guidance,
      rationale: input.guidance,
      context: { corrects: decision.id, mode: input.mode },
    });
  }
}

function stepOfParent(all: Decision[], d: Decision): number {
  const parent = all.find((p) => p.id === d.parentId);
  return parent?.stepIndex ?? -1;
}
