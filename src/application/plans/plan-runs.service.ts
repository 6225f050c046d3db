import type { Plan } from '../../domain/plan/plan.ts';
import type { Principal } from '../ports/principal.ts';
import type { OwnedRun } from '../tasks/task.service.ts';
import type { PlanQueries } from './plan-queries.service.ts';
import type { PlanServiceDeps, RunResult } from './plan.types.ts';

/** A phase a command starts on a new task of the plan's context. */
export type PhaseOp = 'strategize' | 'execute' | 'apply';

/**
 * Starts a phase run as a new A2A task of the plan's context (TaskService.startOwnedTask: no
 * actor, no chat), and answers with the plan's status and the task. The lifecycle commands and
 * the corrections of a plan from a goal (its re-plan) start their runs here.
 */
export class PlanRuns {
  private readonly deps: Pick<PlanServiceDeps, 'tasks'>;
  private readonly queries: PlanQueries;

  constructor(deps: Pick<PlanServiceDeps, 'tasks'>, queries: PlanQueries) {
    this.deps = deps;
    this.queries = queries;
  }

  /** Runs `run` on a new task of the plan's context (waiting for its end with `wait`), reporting on it. */
  async start(plan: Plan, op: PhaseOp, principal: Principal, wait: boolean, run: OwnedRun): Promise<RunResult> {
    const task = await this.deps.tasks.startOwnedTask(
      { contextId: plan.contextId, text: `${op} plan ${plan.id}`, wait },
      principal,
      run,
    );
    return { plan: await this.queries.status(plan.id, principal), taskId: task.id, task };
  }
}
