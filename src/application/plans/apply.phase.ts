import type { Plan } from '../../domain/plan/plan.ts';
import { policyOf } from '../../domain/plan/plan.ts';
import { awaitAnswer, markApplied, startPhase } from '../../domain/plan/plan-state.ts';
import { planMeta, type PlanRunPorts, type TaskHandle, totalStats } from './plan.recorder.ts';
import { vetoText } from '../hooks/hook.service.ts';
import { beforeApply, notifyPlanHooks } from '../hooks/plan-hooks.ts';
import { startApply } from '../../domain/plan/plan-progress.ts';
import type { Principal } from '../ports/principal.ts';
import type { ApplyOutcome } from '../ports/sandbox.port.ts';
import { resourcesOf } from './plan-definitions.ts';

/** What a before-apply hook is told of the changes: the stats and the files, per resource. */
async function applyFacts(io: Pick<ApplyInputs, 'hooks' | 'recorder'>, plan: Plan): Promise<unknown[]> {
  if (!io.hooks) return [];
  return (await io.recorder.diffs(plan)).map((d) => ({
    resource: d.resource,
    stats: d.diff.stats,
    files: d.diff.files.map((f) => ({ status: f.status, path: f.path })),
  }));
}

/** What the apply phase uses: the recorder, the sandboxes it applies and removes, the apply hooks, the log. */
export type ApplyInputs = Pick<PlanRunPorts, 'recorder' | 'sandboxes' | 'hooks' | 'logger' | 'audit' | 'registry'>;

/**
 * The apply phase: asks for approval first unless `yes` or the plan's profile skips it
 * (`applyApproval: false`), then applies each sandbox into its project; the audit log records
 * who (`by`, the principal whose request or approval applied it) applied what.
 */
export async function applyChanges(
  io: ApplyInputs,
  plan: Plan,
  turn: TaskHandle,
  yes: boolean,
  by?: Principal,
): Promise<void> {
  const { sandboxes, logger } = io;
  startApply(plan, turn.task.id);
  const diffs = await io.recorder.diffs(plan);
  if (diffs.length > 0 && totalStats(diffs).files === 0) return closeUnchanged(io, plan, turn);
  if (!yes && policyOf(plan).applyApproval) {
    const request = {
      kind: 'apply' as const,
      planId: plan.id,
      stats: totalStats(diffs),
      files: diffs.flatMap((x) => x.diff.files.map((f) => `${f.status} ${f.path}`)),
      options: ['approve', 'reject'],
    };
    awaitAnswer(plan, { kind: 'apply-approval', taskId: turn.task.id, request });
    await io.recorder.save(plan);
    return turn.status(
      'TASK_STATE_INPUT_REQUIRED',
      `Apply ${request.stats.files} changed file(s) to the project? (approve / reject)`,
      { data: { approvalRequest: request }, ...planMeta(plan) },
    );
  }
  startPhase(plan, 'apply');
  await io.recorder.save(plan);
  const veto = await beforeApply(io.hooks, plan, turn, { changes: await applyFacts(io, plan) });
  if (veto)
    return io.recorder.fail(plan, turn, 'apply', {
      kind: 'policy',
      message: `${vetoText(veto)}; nothing was applied`,
      recoverable: true,
      hint: `see the hook's output with agents task get ${turn.task.id}; once it would allow it, run agents plan apply ${plan.id}`,
    });
  await turn.status('TASK_STATE_WORKING', 'Applying the changes to the project', planMeta(plan));
  const applied: Array<{ resource: string; commit?: string | undefined; files: string[] }> = [];
  // A git-remote pushes with its definition as it is now (its URL, credentials and push setting).
  const definitions = await resourcesOf(io.registry, plan);
  for (const sb of plan.sandboxes) {
    const outcome = await sandboxes.apply(
      sb,
      `${plan.description}\n\nApplied by CleverAgents plan ${plan.id} (${plan.action}).`,
      definitions.find((d) => d.name === sb.resource),
    );
    if (!outcome.ok) {
      return io.recorder.fail(plan, turn, 'apply', {
        kind: outcome.reason,
        message: outcome.message,
        files: outcome.files,
        recoverable: true,
        hint:
          outcome.reason === 'dirty'
            ? `commit or stash your changes to ${outcome.files.join(', ')} (or check out ${sb.targetBranch ?? 'the target branch'}), then run agents plan apply ${plan.id}`
            : sb.remote
              ? `the remote's ${sb.targetBranch ?? 'target branch'} moved since the plan started: run agents plan rebase ${plan.id} to bring the plan onto it, and apply again`
              : sb.kind === 'git-worktree'
                ? `${sb.targetBranch ?? 'the target branch'} moved and changed the same lines since the plan started: run agents plan rebase ${plan.id} to bring the plan onto it (then resolve any conflicts), and apply again`
                : `the directory changed the same files since the plan started: resolve by hand, or roll back / correct the plan and apply again`,
      });
    }
    applied.push({ resource: sb.resource, commit: outcome.commit, files: outcome.files });
    await turn.status('TASK_STATE_WORKING', appliedLine(sb.resource, outcome), planMeta(plan));
  }
  for (const sb of plan.sandboxes)
    await sandboxes.remove(sb).catch((err: unknown) => logger.warn({ err, planId: plan.id }, 'sandbox cleanup failed'));
  markApplied(plan, { at: io.recorder.now().toISOString(), commits: applied });
  await io.recorder.save(plan);
  await io.audit?.record({
    event: 'plan.applied',
    by,
    namespace: plan.owner,
    target: plan.id,
    outcome: 'ok',
    details: {
      projects: plan.projects,
      files: applied.reduce((n, a) => n + a.files.length, 0),
      commits: applied.map((a) => ({ resource: a.resource, commit: a.commit ?? null, files: a.files.length })),
    },
  });
  await notifyPlanHooks(io.hooks, 'after-apply', plan, turn, { applied: plan.applied }, logger);
  await turn.status('TASK_STATE_COMPLETED', `Plan ${plan.id} applied`, planMeta(plan));
}

/** What one sandbox's apply did, as the progress line says it: where the commit went, for a remote which branch. */
function appliedLine(resource: string, o: Extract<ApplyOutcome, { ok: true }>): string {
  const where = o.pushedTo ? `Pushed to ${resource}, branch ${o.pushedTo} on the remote` : `Applied to ${resource}`;
  const files = `${o.files.length} file${o.files.length === 1 ? '' : 's'}`;
  return `${where}${o.commit ? `: commit ${o.commit.slice(0, 12)}` : ''} (${files})`;
}

/**
 * A plan whose steps changed no file (each rejected, or a command that wrote nothing): there is
 * nothing to approve or commit, so the apply says so and closes the plan — its sandbox removed,
 * no commit recorded — rather than reporting "Applied (0 files)" as if something had landed.
 */
async function closeUnchanged(io: ApplyInputs, plan: Plan, turn: TaskHandle): Promise<void> {
  startPhase(plan, 'apply');
  await io.recorder.save(plan);
  for (const sb of plan.sandboxes)
    await io.sandboxes
      .remove(sb)
      .catch((err: unknown) => io.logger.warn({ err, planId: plan.id }, 'sandbox cleanup failed'));
  markApplied(plan, { at: io.recorder.now().toISOString(), commits: [] });
  await io.recorder.save(plan);
  await turn.status(
    'TASK_STATE_COMPLETED',
    `Nothing to apply: plan ${plan.id} changed no files, so no commit was made; the plan is closed and its sandbox removed`,
    planMeta(plan),
  );
}
