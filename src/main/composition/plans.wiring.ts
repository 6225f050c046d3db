import type { ContextService } from '../../application/context/context.service.ts';
import { PlanEngine } from '../../application/plans/plan-engine.ts';
import { PlanService } from '../../application/plans/plan.service.ts';
import type { RegistryParts } from './registry.wiring.ts';
import type { ServiceDeps } from './service-deps.ts';
import type { TaskParts } from './tasks.wiring.ts';

/** The plan engine and the plan service (kept in a file of its own: the plan area changes its wiring). */
export interface PlanParts {
  engine: PlanEngine;
  plans: PlanService;
}

/**
 * Plans run their phases on tasks of their own contexts: no actor runs there, nobody chats there
 * (the plan service registers as the owner of those contexts with the task service's OwnedTasks).
 */
export function buildPlans(
  deps: ServiceDeps,
  registry: RegistryParts,
  context: ContextService,
  tasks: TaskParts,
): PlanParts {
  const { llm } = registry;
  const engine = new PlanEngine({
    plans: deps.plans,
    registry: registry.registry,
    sandboxes: deps.sandboxes,
    tools: deps.tools,
    logger: deps.logger,
    commandTimeoutMs: deps.commandTimeoutMs,
    hooks: registry.hooks,
    llm: llm && {
      models: llm.models,
      keys: llm.keys,
      tokens: llm.tokens,
      validator: llm.validator,
      transcripts: llm.transcripts,
      context,
    },
  });
  const plans = new PlanService({ plans: deps.plans, registry: registry.registry, tasks: tasks.service, engine });
  tasks.owned.add(plans);
  return { engine, plans };
}
