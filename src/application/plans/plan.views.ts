import type { Checkpoint, Decision, Plan, ToolCallRecord } from '../../domain/plan/plan.ts';
import { copyPlan, policyOf } from '../../domain/plan/plan.ts';
import { allowedOperations } from '../../domain/plan/plan-state.ts';
import type { ArtifactRow, CommandRun, DecisionNode, FileChange, PlanStatus } from '../../domain/plan/plan-views.ts';

export type { PlanStatus };

/** What a server's remote users see instead of its host paths (its data directory's sandboxes, a resource's directory). */
export const ON_THE_SERVER = '(on the server)';

/** `hostPaths` false (server mode): the sandboxes' directories are not shown. */
export function statusOf(
  plan: Plan,
  decisions: Decision[],
  calls: ToolCallRecord[],
  checkpoints: Checkpoint[],
  running: boolean,
  hostPaths = true,
): PlanStatus {
  // The view is a copy: it is serialised later, and the running plan may change meanwhile.
  const p = copyPlan(plan);
  const policy = policyOf(p);
  const out: PlanStatus = {
    planId: p.id,
    name: p.name,
    action: p.action,
    projects: p.projects,
    arguments: p.arguments,
    description: p.description,
    definitionOfDone: p.definitionOfDone,
    automationProfile: p.automationProfile,
    policy: { ...policy, rules: policy.rules.map((r) => ({ ...r })) },
    phase: p.phase,
    state: p.state,
    running,
    attempt: p.attempt,
    progress: { stepsDone: p.cursor, stepsTotal: p.stepsTotal },
    timing: {
      createdAt: p.createdAt,
      updatedAt: p.updatedAt,
      elapsedMs: Date.parse(p.updatedAt) - Date.parse(p.createdAt),
    },
    counts: {
      decisions: decisions.length,
      activeDecisions: decisions.filter((d) => !d.superseded).length,
      toolCalls: calls.length,
      checkpoints: checkpoints.length,
    },
    usage: p.usage,
    budget: {
      maxToolCalls: p.budget.maxToolCalls,
      maxWallSeconds: Math.round(p.budget.maxWallMs / 1000),
      ...(p.budget.maxTokens ? { maxTokens: p.budget.maxTokens } : {}),
      ...(p.budget.maxCost ? { maxCost: p.budget.maxCost } : {}),
    },
    tasks: p.tasks,
    contextId: p.contextId,
    sandboxes: hostPaths
      ? p.sandboxes
      : p.sandboxes.map((sb) => ({ ...sb, root: ON_THE_SERVER, source: ON_THE_SERVER })),
    checkpoints: checkpoints.map((c) => ({ id: c.id, label: c.label, stepIndex: c.stepIndex, createdAt: c.createdAt })),
    allowed: running ? [] : allowedOperations(p),
  };
  if (p.network) out.network = p.network;
  if (p.confinement) out.confinement = p.confinement;
  if (p.error) out.error = p.error;
  if (p.waiting) out.waiting = p.waiting;
  if (p.applied) out.applied = p.applied;
  if (p.actors) out.actors = p.actors;
  if (p.invariants) out.invariants = p.invariants;
  if (p.verify) out.verify = p.verify;
  if (p.done) out.done = p.done;
  return out;
}

/** A call that kept a command's output, as `plan status` shows it: with the step its decision made it for. */
export function commandRunOf(call: ToolCallRecord, decisions: readonly Decision[]): CommandRun | undefined {
  if (!call.output) return undefined;
  const stepIndex = decisions.find((d) => d.id === call.decisionId)?.stepIndex;
  return {
    toolCallId: call.id,
    decisionId: call.decisionId,
    ...(stepIndex !== undefined ? { step: stepIndex + 1 } : {}),
    tool: call.tool,
    ok: call.ok,
    summary: call.summary,
    ...(call.exitCode !== undefined ? { exitCode: call.exitCode } : {}),
    createdAt: call.createdAt,
    output: call.output,
  };
}

/** Decisions as a tree (roots first, children in order); superseded ones only when asked. */
export function decisionTree(all: Decision[], showSuperseded: boolean): DecisionNode[] {
  const kept = all.filter((d) => showSuperseded || !d.superseded);
  const nodes = new Map(kept.map((d) => [d.id, { ...d, children: [] as DecisionNode[] }]));
  const roots: DecisionNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parentId ? nodes.get(n.parentId) : undefined;
    if (parent) parent.children.push(n);
    else roots.push(n);
  }
  return roots;
}

/** Per changed file: what the plan did to it (written, edited, deleted), its size and +/-. */
export function artifactsOf(
  sandboxes: Array<{ resource: string; files: FileChange[] }>,
  calls: ToolCallRecord[],
): ArtifactRow[] {
  const out: ArtifactRow[] = [];
  for (const sb of sandboxes) {
    for (const f of sb.files) {
      const touching = calls.filter((c) => c.ok && c.resource === sb.resource && c.filesTouched.includes(f.path));
      const kind: ArtifactRow['change'] =
        f.status === 'deleted'
          ? 'deleted'
          : f.status === 'added' || touching.some((c) => c.tool.endsWith('/write-file'))
            ? 'written'
            : 'edited';
      out.push({
        resource: sb.resource,
        path: f.path,
        change: kind,
        status: f.status,
        size: f.size,
        additions: f.additions,
        deletions: f.deletions,
        binary: f.binary,
        tools: [...new Set(touching.map((c) => c.tool))],
      });
    }
  }
  return out;
}
