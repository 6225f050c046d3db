/**
 * A plan's hook points: its tool calls (before and after, in its sandbox), its phase changes, and
 * its apply (before: may veto; after: told what was applied). Runs are recorded on the task of the
 * phase that fired them.
 */
import type { Artifact } from '../../domain/a2a.model.ts';
import type { Plan } from '../../domain/plan/plan.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { HookContext, HookEventFields, HookService, HookVeto } from './hook.service.ts';
import { toolCallHooks, type ToolCallHooks } from './tool-call-hooks.ts';

/** The task a plan's phase reports on (TaskHandle's artifact half). */
export interface PlanHookTask {
  task: { id: string };
  signal: AbortSignal;
  artifact(a: Artifact): Promise<void>;
}

const namespaceOfPlan = (plan: Pick<Plan, 'projects' | 'owner'>): string => {
  const first = plan.projects[0];
  return first ? namespaceOf(first) : plan.owner;
};

function contextOf(plan: Plan, turn: PlanHookTask): HookContext {
  return {
    namespace: namespaceOfPlan(plan),
    project: plan.projects[0],
    projects: plan.projects,
    plan: plan.id,
    task: turn.task.id,
    workdir: plan.sandboxes[0]?.root,
    network: plan.network ?? 'none',
    signal: turn.signal,
    artifact: (a) => turn.artifact(a),
  };
}

/** The tool-call hooks of a plan's execute phase (commands run in its sandbox). */
export function planToolCallHooks(
  hooks: HookService | undefined,
  plan: Plan,
  turn: PlanHookTask,
): ToolCallHooks | undefined {
  const ctx = contextOf(plan, turn);
  return toolCallHooks(hooks, { ...ctx, owner: ctx.namespace, task: turn.task });
}

/** Runs the before-apply hooks: a veto means the plan must not be applied. */
export async function beforeApply(
  hooks: HookService | undefined,
  plan: Plan,
  turn: PlanHookTask,
  fields: HookEventFields,
): Promise<HookVeto | undefined> {
  return hooks ? (await hooks.fire('before-apply', fields, contextOf(plan, turn))).veto : undefined;
}

/**
 * Runs the hooks of an event that decides nothing (after-apply, plan-phase): a failure to run
 * them is logged, never the plan's failure.
 */
export async function notifyPlanHooks(
  hooks: HookService | undefined,
  event: 'after-apply' | 'plan-phase',
  plan: Plan,
  turn: PlanHookTask,
  fields: HookEventFields,
  logger: Logger,
): Promise<void> {
  if (!hooks) return;
  try {
    await hooks.fire(event, fields, contextOf(plan, turn));
  } catch (err) {
    if (!turn.signal.aborted) logger.warn({ err, planId: plan.id, event }, 'the hooks of a plan event failed');
  }
}
