import { planNotFound } from '../../application/plans/plan-access.service.ts';
import { ContextService, type ContextPlan } from '../../application/context/context.service.ts';
import type { PlanRepository } from '../../application/ports/plan.repository.port.ts';
import type { Principal } from '../../application/ports/principal.ts';
import type { RegistryService } from '../../application/registry/registry.service.ts';
import type { ServiceDeps } from './service-deps.ts';

/** What every actor sees of a project: plans' strategy and execution actors, project-bound chats. */
export function buildContext(deps: ServiceDeps, registry: RegistryService): ContextService {
  return new ContextService({
    registry,
    inventory: deps.context.inventory,
    tokens: deps.context.tokens,
    plans: new StoredPlanLookup(deps.plans),
  });
}

/**
 * The caller's plan as the context service needs it (its projects, action, goal and decisions),
 * read from the store. Not through the plan service: the plan engine is built after the context
 * service (its actors assemble their context with it), and what this reads is fixed when the plan
 * is made or saved before it is reported, so the stored plan is the plan as it stands.
 */
export class StoredPlanLookup {
  private readonly plans: Pick<PlanRepository, 'get' | 'decisions'>;

  constructor(plans: Pick<PlanRepository, 'get' | 'decisions'>) {
    this.plans = plans;
  }

  /** NOT_FOUND for a plan that is not the caller's (as the plan service answers). */
  async get(planId: string, principal: Principal): Promise<ContextPlan> {
    const plan = await this.plans.get(planId);
    if (!plan || plan.owner !== principal.namespace) throw planNotFound(planId);
    // The plan and its decisions only: its status would read every record of it.
    return { ...plan, decisions: await this.plans.decisions(planId) };
  }
}
