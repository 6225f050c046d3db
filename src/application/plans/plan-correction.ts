import { AppError } from '../../domain/errors.js';
import { assertAllowed, requeueExecute, type Decision } from '../../domain/plan/plan.js';
import type { Correction } from '../../domain/plan/plan-views.js';
import type { Principal } from '../ports/principal.js';
import type { PlanAccess } from './plan-access.js';
import type { PlanAnswers } from './plan-answers.js';
import type { CorrectInput, PlanServiceDeps } from './plan.types.js';

/**
 * Corrections of a plan's decision tree (`plan correct`): `append` adds the user's guidance under a
 * decision and changes nothing else; `revert` supersedes the decision and everything after it,
 * restores the sandbox to the checkpoint before it, and strategizes again from there with the
 * guidance (a plan with a sandbox goes back to execute/queued, to run again from that step). A dry
 * run says what would happen and changes nothing.
 */
export class PlanCorrections {
  constructor(
    private readonly deps: Pick<PlanServiceDeps, 'plans' | 'engine'>,
    private readonly access: PlanAccess,
    private readonly answers: PlanAnswers,
  ) {}

  async correct(input: CorrectInput, principal: Principal, planId?: string): Promise<Correction> {
    const { plan, decision, all } = await this.access.findDecision(input.decisionId, principal, planId);
    this.access.assertIdle(plan, 'correct');
    assertAllowed(plan, 'correct');
    if (decision.superseded)
      throw new AppError('INVALID_STATE', `Decision ${decision.id} is already superseded`, {
        hint: `see the current tree with agents plan tree ${plan.id}`,
      });
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
    if (input.dryRun) {
      if (input.mode === 'append')
        return {
          planId: plan.id,
          mode: 'append',
          dryRun: true,
          attempt: plan.attempt,
          wouldSupersede: [],
          wouldAdd: 'one guidance decision',
        };
      return {
        planId: plan.id,
        mode: input.mode,
        dryRun: true,
        attempt: plan.attempt,
        wouldSupersede: affected.map((d) => d.id),
        wouldRestoreCheckpoint: restoreTo?.id,
        wouldResumeAtStep: from + 1,
      };
    }
    plan.attempt++;
    const guidance = await this.deps.engine.record(plan, {
      type: 'guidance',
      parentId: input.mode === 'append' ? decision.id : decision.parentId,
      question: `Correction (${input.mode}) of ${decision.id}`,
      chosen: input.guidance,
      rationale: input.guidance,
      context: { corrects: decision.id, mode: input.mode },
    });
    if (input.mode === 'append') {
      await this.deps.engine.save(plan);
      return { planId: plan.id, mode: 'append', attempt: plan.attempt, added: [guidance.id], superseded: [] };
    }
    const waiting = plan.waiting;
    for (const d of affected) await this.deps.plans.putDecision({ ...d, superseded: true });
    if (restoreTo) await this.deps.engine.restore(plan, restoreTo);
    plan.cursor = Math.min(plan.cursor, from);
    plan.error = undefined;
    const made = await this.deps.engine.strategize(
      plan,
      undefined,
      decision.type === 'strategy' ? 0 : from,
      input.guidance,
    );
    if (plan.sandboxes.length) requeueExecute(plan);
    await this.deps.engine.save(plan);
    await this.answers.closeWaiting(
      waiting,
      plan,
      'The request this task waited for was superseded by a correction of the plan',
      principal,
    );
    return {
      planId: plan.id,
      mode: 'revert',
      attempt: plan.attempt,
      superseded: affected.map((d) => d.id),
      added: [guidance.id, ...made.map((d) => d.id)],
      restoredCheckpoint: restoreTo?.id,
      resumeAtStep: from + 1,
    };
  }
}

function stepOfParent(all: Decision[], d: Decision): number {
  const parent = all.find((p) => p.id === d.parentId);
  return parent?.stepIndex ?? -1;
}
