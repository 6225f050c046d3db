import { AppError } from '../../domain/errors.ts';
import type { ActorDefinition } from '../../domain/registry/actor.definition.ts';
import type { Actor, ActorCatalog } from '../ports/actor.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { RegistryService } from './registry.service.ts';

/** How many registered actors a hint names; `agents actor list` shows the rest. */
const HINT_ACTORS = 20;

/** Makes the actor of an LLM definition (absent: this agent has no LLM providers wired). */
export type LlmActorFactory = (name: string, definition: ActorDefinition) => Actor;

/**
 * Actors as the registry defines them: `builtin/…` and any `provider: builtin` actor run the
 * deterministic built-ins; the LLM providers run through the LLM actor.
 */
export class RegistryActorCatalog implements ActorCatalog {
  private readonly registry: RegistryService;
  private readonly byModel: ReadonlyMap<string, Actor>;
  private readonly llm?: LlmActorFactory | undefined;

  constructor(registry: RegistryService, byModel: ReadonlyMap<string, Actor>, llm?: LlmActorFactory) {
    this.registry = registry;
    this.byModel = byModel;
    this.llm = llm;
  }

  async resolve(name: string): Promise<Actor | undefined> {
    const entity = await this.registry.use('actor', name);
    if (!entity) return undefined;
    const d = entity.definition;
    if (d.provider !== 'builtin' && this.llm) return this.llm(entity.name, d);
    const actor = d.provider === 'builtin' ? this.byModel.get(d.model) : undefined;
    if (!actor) {
      throw new AppError(
        'INVALID_STATE',
        d.provider === 'builtin'
          ? `Actor ${name} names the built-in model ${d.model}, which this agent does not have`
          : `Actor ${name} uses provider ${d.provider}, and this agent runs no LLM providers`,
        {
          details: { entity: 'actor', name, provider: d.provider },
          hint:
            d.provider === 'builtin'
              ? `built-in models: ${[...this.byModel.keys()].join(', ')}`
              : 'chat with a provider: builtin actor (e.g. builtin/echo)',
        },
      );
    }
    return actor;
  }

  names(): string[] {
    return [...this.byModel.values()].map((a) => a.name);
  }

  async available(principal: Principal): Promise<{ names: string[]; more: number }> {
    const builtins = this.names();
    const page = await this.registry.list('actor', { pageSize: HINT_ACTORS }, principal);
    const registered = page.items.map((e) => e.name).filter((n) => !builtins.includes(n));
    return { names: [...builtins, ...registered], more: page.totalSize - page.items.length };
  }
}
