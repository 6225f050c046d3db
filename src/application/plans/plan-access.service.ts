import { AppError } from '../../domain/errors.ts';
import { type Decision, type Plan } from '../../domain/plan/plan.ts';
import { isAllowed, type PlanOperation } from '../../domain/plan/plan-state.ts';
import { resolveRef } from '../id-refs.ts';
import type { Principal } from '../ports/principal.ts';
import type { PlanServiceDeps } from './plan.types.ts';

/** A plan's A2A context: its tasks (one per phase run) live there, and nothing else does. */
export const CONTEXT_PREFIX = 'plan-';

/** The id of the plan a context id names, or undefined when it names no plan's context. */
export function planIdOfContext(contextId: string): string | undefined {
  return contextId.startsWith(CONTEXT_PREFIX) ? contextId.slice(CONTEXT_PREFIX.length) : undefined;
}

/**
 * Finds the caller's plan (someone else's plan is not found, never forbidden: its id tells nothing)
 * and the guards every operation shares: a running plan and a plan that waits for an answer refuse
 * what must wait. What the plan's phase and state allow is the domain's (`assertAllowed`).
 */
export class PlanAccess {
  private readonly deps: Pick<PlanServiceDeps, 'plans' | 'engine'>;

  constructor(deps: Pick<PlanServiceDeps, 'plans' | 'engine'>) {
    this.deps = deps;
  }

  /**
   * The caller's plan named by its id, a unique prefix of it, or `last` (the caller's newest plan).
   * Only the caller's plans are looked at, so another user's plan never makes a prefix ambiguous.
   */
  async get(ref: string, principal: Principal): Promise<Plan> {
    const owner = principal.namespace;
    const found = await resolveRef<Plan>(ref, {
      kind: 'plan',
      exact: async (id) => {
        const plan = await this.deps.engine.load(id);
        return plan?.owner === owner ? plan : undefined;
      },
      latest: async () => (await this.deps.plans.list({ owner, limit: 1 }))[0],
      byPrefix: (prefix, limit) => this.deps.plans.byIdPrefix(owner, prefix, limit),
      idOf: (p) => p.id,
      describe: (p) => p.description || p.name,
      notFound: planNotFound,
    });
    // A prefix or `last` found the stored plan; the engine's copy is the live one while it runs.
    return found.id === ref ? found : ((await this.deps.engine.load(found.id)) ?? found);
  }

  assertIdle(plan: Plan, op: PlanOperation | 'delete'): void {
    if (this.deps.engine.running.has(plan.id)) {
      throw new AppError(
        'INVALID_STATE',
        `Plan ${plan.id} is running (${plan.phase}/${plan.state}); ${op} must wait until it stops`,
        {
          details: {
            planId: plan.id,
            phase: plan.phase,
            state: plan.state,
            operation: op,
            allowed: isAllowed(plan, 'cancel') ? ['cancel', 'status'] : ['status'],
          },
          hint: `follow it with agents task watch ${plan.tasks[plan.phase] ?? ''}, or cancel it`,
        },
      );
    }
  }

  async findDecision(
    decisionId: string,
    principal: Principal,
    planId?: string,
  ): Promise<{ plan: Plan; decision: Decision; all: Decision[] }> {
    const candidates = planId
      ? [await this.get(planId, principal)]
      : await this.deps.plans.list({ owner: principal.namespace });
    for (const plan of candidates) {
      const all = await this.deps.plans.decisions(plan.id);
      const decision = all.find((d) => d.id === decisionId);
      if (decision) return { plan: (await this.deps.engine.load(plan.id)) ?? plan, decision, all };
    }
    throw new AppError('NOT_FOUND', `Decision ${decisionId} was not found`, {
      details: { entity: 'decision', id: decisionId },
      hint: 'see decisions with `agents plan tree <plan-id>`',
    });
  }

  async planOfCheckpoint(checkpointId: string, principal: Principal): Promise<Plan> {
    for (const plan of await this.deps.plans.list({ owner: principal.namespace })) {
      if ((await this.deps.plans.checkpoints(plan.id)).some((c) => c.id === checkpointId))
        return (await this.deps.engine.load(plan.id)) ?? plan;
    }
    throw new AppError('NOT_FOUND', `Checkpoint ${checkpointId} was not found`, {
      details: { entity: 'checkpoint', id: checkpointId },
      hint: 'checkpoints are listed by `agents plan status <plan-id>`',
    });
  }
}

/** The refusal of a command that must wait until the plan's pending question is answered. */
export function waitingError(plan: Plan): AppError {
  return new AppError('INVALID_STATE', `Plan ${plan.id} waits for your answer on task ${plan.waiting?.taskId}`, {
    details: {
      planId: plan.id,
      phase: plan.phase,
      state: plan.state,
      waiting: plan.waiting?.kind,
      allowed: ['approve', 'reject', 'prompt', 'cancel', 'status'],
    },
    hint: `answer it (agents plan approve ${plan.id}, agents plan reject ${plan.id} --guidance "…", or message/send on the task), or cancel the plan`,
  });
}

/** A plan that is not there or not the caller's: the same answer either way. */
export function planNotFound(planId: string): AppError {
  return new AppError('NOT_FOUND', `Plan ${planId} was not found`, {
    details: { entity: 'plan', id: planId },
    hint: 'list your plans with `agents plan list`',
  });
}
