import type { Plan } from '../../domain/plan/plan.ts';
import type { ActionDefinition } from '../../domain/registry/action.definition.ts';
import type { ResourceDefinition } from '../../domain/registry/resource.definition.ts';
import type { RegistryService } from '../registry/registry.service.ts';

/** The registry as a running phase reads it: by name, as the agent itself (the owner was checked at `use`). */
export type PlanRegistry = Pick<RegistryService, 'use'>;

/** The plan's action as it is defined now (a run reads it afresh: it may have been edited since `use`). */
export async function actionOf(registry: PlanRegistry, plan: Plan): Promise<ActionDefinition> {
  const a = await registry.use('action', plan.action);
  if (!a) throw new Error(`action ${plan.action} no longer exists`);
  return a.definition;
}

/** The resources of the plan's projects, each once, in the projects' order. */
export async function resourcesOf(registry: PlanRegistry, plan: Plan): Promise<ResourceDefinition[]> {
  const out: ResourceDefinition[] = [];
  for (const p of plan.projects) {
    const project = (await registry.use('project', p))?.definition;
    for (const r of project?.resources ?? []) {
      const res = (await registry.use('resource', r))?.definition;
      if (res && !out.some((x) => x.name === res.name)) out.push(res);
    }
  }
  return out;
}
