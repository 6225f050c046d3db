import type { Plan } from '../../domain/plan/plan.ts';
import { policyOf } from '../../domain/plan/plan.ts';
import { awaitAnswer, markApplied, startPhase } from '../../domain/plan/plan-state.ts';
import { totalStats, type PlanWorkbench, type TaskHandle } from './plan-workbench.ts';
import { vetoText } from '../hooks/hook.service.ts';
import { beforeApply, notifyPlanHooks } from '../hooks/plan-hooks.ts';
import { startApply } from '../../domain/plan/plan-progress.ts';

/** What a before-apply hook is told of the changes: the stats and the files, per resource. */
async function applyFacts(wb: PlanWorkbench, plan: Plan): Promise<unknown[]> {
  if (!wb.deps.hooks) return [];
  return (await wb.diffs(plan)).map((d) => ({
    resource: d.resource,
    stats: d.diff.stats,
    files: d.diff.files.map((f) => ({ status: f.status, path: f.path })),
  }));
}

/** The apply phase: asks for approval first unless `yes` or the plan's profile skips it (`applyApproval: false`), then applies each sandbox into its project. */
export async function applyChanges(wb: PlanWorkbench, plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
  const { sandboxes, logger } = wb.deps;
  startApply(plan, turn.task.id);
  if (!yes && policyOf(plan).applyApproval) {
    const diffs = await wb.diffs(plan);
    const request = {
      kind: 'apply',
      planId: plan.id,
      stats: totalStats(diffs),
      files: diffs.flatMap((x) => x.diff.files.map((f) => `${f.status} ${f.path}`)),
      options: ['approve', 'reject'],
    };
    awaitAnswer(plan, { kind: 'apply-approval', taskId: turn.task.id, request });
    await wb.save(plan);
    return turn.status(
      'TASK_STATE_INPUT_REQUIRED',
      `Apply ${request.stats.files} changed file(s) to the project? (approve / reject)`,
      { data: { approvalRequest: request }, ...wb.meta(plan) },
    );
  }
  startPhase(plan, 'apply');
  await wb.save(plan);
  const veto = await beforeApply(wb.deps.hooks, plan, turn, { changes: await applyFacts(wb, plan) });
  if (veto)
    return wb.fail(plan, turn, 'apply', {
      kind: 'policy',
      message: `${vetoText(veto)}; nothing was applied`,
      recoverable: true,
      hint: `see the hook's output with agents task show ${turn.task.id}; once it would allow it, run agents plan apply ${plan.id}`,
    });
  await turn.status('TASK_STATE_WORKING', 'Applying the changes to the project', wb.meta(plan));
  const applied: Array<{ resource: string; commit?: string | undefined; files: string[] }> = [];
  for (const sb of plan.sandboxes) {
    const outcome = await sandboxes.apply(
      sb,
      `${plan.description}\n\nApplied by CleverAgents plan ${plan.id} (${plan.action}).`,
    );
    if (!outcome.ok) {
      return wb.fail(plan, turn, 'apply', {
        kind: outcome.reason,
        message: outcome.message,
        files: outcome.files,
        recoverable: true,
        hint:
          outcome.reason === 'dirty'
            ? `commit or stash your changes to ${outcome.files.join(', ')} (or check out ${sb.targetBranch ?? 'the target branch'}), then run agents plan apply ${plan.id}`
            : sb.kind === 'git-worktree'
              ? `${sb.targetBranch ?? 'the target branch'} moved and changed the same lines since the plan started: run agents plan rebase ${plan.id} to bring the plan onto it (then resolve any conflicts), and apply again`
              : `the directory changed the same files since the plan started: resolve by hand, or roll back / correct the plan and apply again`,
      });
    }
    applied.push({ resource: sb.resource, commit: outcome.commit, files: outcome.files });
    await turn.status(
      'TASK_STATE_WORKING',
      `Applied to ${sb.resource}${outcome.commit ? `: commit ${outcome.commit.slice(0, 12)}` : ''} (${outcome.files.length} file${outcome.files.length === 1 ? '' : 's'})`,
      wb.meta(plan),
    );
  }
  for (const sb of plan.sandboxes)
    await sandboxes.remove(sb).catch((err: unknown) => logger.warn({ err, planId: plan.id }, 'sandbox cleanup failed'));
  markApplied(plan, { at: wb.now().toISOString(), commits: applied });
  await wb.save(plan);
  await notifyPlanHooks(wb.deps.hooks, 'after-apply', plan, turn, { applied: plan.applied }, logger);
  await turn.status('TASK_STATE_COMPLETED', `Plan ${plan.id} applied`, wb.meta(plan));
}
