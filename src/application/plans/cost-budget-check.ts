/**
 * A cost budget (`--max-cost`) counts a plan's model tokens at its actors' `prices`. A model whose
 * actor has none costs nothing by that count, so the budget would be accepted and never stop the
 * plan: it is refused when it is set, naming the actor and how to give it prices.
 */
import { AppError } from '../../domain/errors.ts';
import type { PlanActors } from '../../domain/plan/plan.ts';
import type { ActorDefinition } from '../../domain/registry/actor.definition.ts';
import type { RegistryService } from '../registry/registry.service.ts';

/**
 * Refuses a cost budget for a plan whose models include one without prices: the strategy and
 * execution actors and the fallbacks they may hand a step to. A plan without actors (declared
 * steps) calls no model: nothing to count. Actors that do not exist or are built-in are left to
 * the phase that uses them (a fallback like that is skipped when the plan runs, as here).
 */
export async function assertCostBudgetCounts(
  registry: Pick<RegistryService, 'lookup'>,
  actors: Pick<PlanActors, 'strategy' | 'execution'> | undefined,
  maxCost: number | undefined,
): Promise<void> {
  if (maxCost === undefined || actors === undefined) return;
  const roles = new Map<string, string>();
  const role = (name: string, what: string) =>
    roles.set(name, roles.has(name) ? `${roles.get(name)} and ${what}` : what);
  role(actors.strategy, 'the strategy actor');
  role(actors.execution, 'the execution actor');
  const defs = new Map<string, ActorDefinition>();
  for (const name of [...roles.keys()]) {
    const def = await actorDef(registry, name);
    if (!def) continue;
    defs.set(name, def);
    for (const f of def.fallbacks ?? []) if (!roles.has(f)) role(f, `a fallback of ${name}`);
  }
  for (const [name, what] of roles) {
    const def = defs.get(name) ?? (await actorDef(registry, name));
    if (!def || def.prices) continue;
    throw new AppError(
      'INVALID_PARAMS',
      `A cost budget (--max-cost ${maxCost}) needs prices, and actor ${name} (${what}) has none: its tokens would cost nothing and the budget would never stop the plan`,
      {
        fields: [{ field: 'maxCost', description: `actor ${name} has no prices` }],
        hint: `give ${name} prices — add \`prices: { inputPerMillion: N, outputPerMillion: N }\` to its definition (agents actor show ${name}) and run \`agents actor update ${name} --config FILE\` — or budget tokens instead with --max-tokens`,
      },
    );
  }
}

async function actorDef(registry: Pick<RegistryService, 'lookup'>, name: string): Promise<ActorDefinition | undefined> {
  const e = await registry.lookup('actor', name);
  const def = e?.definition;
  return def && def.provider !== 'builtin' ? def : undefined;
}
