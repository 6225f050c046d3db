import type { Plan } from '../../../domain/plan/plan.js';
import type { PlanWorkbench, TaskHandle } from '../plan-workbench.js';

/** The execute phase of a plan from a goal (being written: see the brief plan-llm-exec). */
export async function executeWithActor(wb: PlanWorkbench, plan: Plan, turn: TaskHandle, _yes: boolean): Promise<void> {
  return wb.fail(plan, turn, 'execute', {
    kind: 'internal',
    message: 'executing a plan from a goal is not available yet',
    recoverable: false,
  });
}
