import { AppError, messageOf } from '../../domain/errors.ts';
import { pageOf } from '../../domain/paging.ts';
import type { Plan } from '../../domain/plan/plan.ts';
import {
  StoredDiff,
  type DecisionExplanation,
  type PlanArtifacts,
  type PlanDiff,
  type PlanTree,
} from '../../domain/plan/plan-views.ts';
import type { Principal } from '../ports/principal.ts';
import type { PlanAccess } from './plan-access.service.ts';
import { diffFiles, storedDiffFiles } from './plan-diff-files.ts';
import { artifactsOf, commandRunOf, decisionTree, statusOf, type PlanStatus } from './plan.views.ts';
import type { PlanListInput, PlanServiceDeps } from './plan.types.ts';

/** The read side of plans: status, tree, explanations, diffs, artifacts and the list. Changes nothing. */
export class PlanQueries {
  private readonly deps: Pick<PlanServiceDeps, 'plans' | 'engine' | 'recorder' | 'tasks' | 'registry'>;
  private readonly access: PlanAccess;

  constructor(deps: Pick<PlanServiceDeps, 'plans' | 'engine' | 'recorder' | 'tasks' | 'registry'>, access: PlanAccess) {
    this.deps = deps;
    this.access = access;
  }

  async status(planRef: string, principal: Principal): Promise<PlanStatus> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    const decisions = await this.deps.plans.decisions(planId);
    const status = statusOf(
      plan,
      decisions,
      await this.deps.plans.toolCalls(planId),
      await this.deps.plans.checkpoints(planId),
      this.deps.engine.running.has(planId),
      this.deps.registry.showsHostPaths(principal),
    );
    const last = await this.deps.plans.lastCommandCall(planId);
    const lastCommand = last && commandRunOf(last, decisions);
    return lastCommand ? { ...status, lastCommand } : status;
  }

  async tree(planRef: string, showSuperseded: boolean, principal: Principal): Promise<PlanTree> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    return {
      planId,
      attempt: plan.attempt,
      decisions: decisionTree(await this.deps.plans.decisions(planId), showSuperseded),
    };
  }

  async explain(decisionId: string, principal: Principal, planId?: string): Promise<DecisionExplanation> {
    const { plan, decision, all } = await this.access.findDecision(decisionId, principal, planId);
    const calls = (await this.deps.plans.toolCalls(plan.id)).filter((c) => c.decisionId === decision.id);
    const outputs = await this.deps.plans.toolCallOutputs(
      plan.id,
      calls.map((c) => c.id),
    );
    const checkpoint = (await this.deps.plans.checkpoints(plan.id)).find((c) => c.decisionId === decision.id);
    return {
      planId: plan.id,
      decision,
      parent: all.find((d) => d.id === decision.parentId),
      children: all.filter((d) => d.parentId === decision.id),
      toolCalls: calls.map((c) => {
        const output = outputs.get(c.id);
        return output ? { ...c, output } : c;
      }),
      checkpointAfter: checkpoint,
    };
  }

  async diff(planRef: string, principal: Principal): Promise<PlanDiff> {
    const plan = await this.access.get(planRef, principal);
    const planId = plan.id;
    if (plan.sandboxes.length) {
      const diffs = await this.deps.recorder.diffs(plan);
      const stats = diffs.reduce(
        (a, d) => ({
          files: a.files + d.diff.stats.files,
          additions: a.additions + d.diff.stats.additions,
          deletions: a.deletions + d.diff.stats.deletions,
        }),
        { files: 0, additions: 0, deletions: 0 },
      );
      return {
        planId,
        source: 'sandbox',
        unified: diffs.map((d) => d.diff.unified).join(''),
        stats,
        sandboxes: diffs.map((d) => ({ resource: d.resource, files: d.diff.files, stats: d.diff.stats })),
        files: diffs.flatMap((d) => diffFiles(d.diff.unified, d.resource)),
      };
    }
    const stored = await this.storedDiff(plan, principal);
    if (stored)
      return {
        planId,
        source: plan.applied ? 'applied' : 'execute-task',
        ...stored,
        files: storedDiffFiles(stored.unified, stored.sandboxes),
      };
    return {
      planId,
      source: 'none',
      unified: '',
      stats: { files: 0, additions: 0, deletions: 0 },
      sandboxes: [],
      files: [],
    };
  }

  async artifacts(planId: string, principal: Principal): Promise<PlanArtifacts> {
    const diff = await this.diff(planId, principal);
    return { planId: diff.planId, files: artifactsOf(diff.sandboxes, await this.deps.plans.toolCalls(diff.planId)) };
  }

  async list(
    input: PlanListInput,
    principal: Principal,
  ): Promise<{ plans: PlanStatus[]; nextPageToken: string; totalSize: number }> {
    let regex: RegExp | undefined;
    try {
      regex = input.nameRegex ? new RegExp(input.nameRegex) : undefined;
    } catch (err) {
      throw new AppError('INVALID_PARAMS', `nameRegex is not a valid regular expression: ${messageOf(err)}`, {
        fields: [{ field: 'nameRegex', description: 'must be a JavaScript regular expression' }],
      });
    }
    const all = (
      await this.deps.plans.list({
        owner: principal.namespace,
        phase: input.phase,
        state: input.state,
        action: input.action,
      })
    ).filter((p) => (!input.project || p.projects.includes(input.project)) && (!regex || regex.test(p.name)));
    // The repository lists newest first: (createdAt, id) descending.
    const page = pageOf(all, (p) => ({ key: p.createdAt, id: p.id }), {
      pageToken: input.pageToken,
      pageSize: input.pageSize ?? 50,
      order: 'desc',
    });
    const records = await this.deps.plans.recordsOf(page.items.map((p) => p.id));
    const plans = page.items.map((p) => {
      const r = records.get(p.id);
      return statusOf(
        p,
        r?.decisions ?? [],
        r?.toolCalls ?? [],
        r?.checkpoints ?? [],
        this.deps.engine.running.has(p.id),
        this.deps.registry.showsHostPaths(principal),
      );
    });
    return { plans, nextPageToken: page.nextPageToken, totalSize: all.length };
  }

  /** The diff artifact the execute task stored (after apply the sandbox is gone). */
  private async storedDiff(plan: Plan, principal: Principal): Promise<(StoredDiff & { unified: string }) | undefined> {
    if (!plan.tasks.execute) return undefined;
    const task = await this.deps.tasks.get(plan.tasks.execute, 0, principal).catch(() => undefined);
    const artifact = task?.artifacts?.find((a) => a.artifactId === 'diff');
    if (!artifact) return undefined;
    const unified = artifact.parts.find((p) => p.text !== undefined)?.text ?? '';
    const data = StoredDiff.safeParse(artifact.parts.find((p) => p.data !== undefined)?.data);
    return {
      unified,
      ...(data.success ? data.data : { stats: { files: 0, additions: 0, deletions: 0 }, sandboxes: [] }),
    };
  }
}
