import { AppError } from '../../domain/errors.js';
import type { ActorDefinition } from '../../domain/registry/entities.js';
import type { Actor, ActorCatalog } from '../ports/actor.port.js';
import type { RegistryService } from './registry.service.js';

/**
 * Actors as the registry defines them: `builtin/…` and any `provider: builtin` actor run the
 * deterministic built-ins; LLM providers are registered and shown, but cannot chat yet.
 */
export class RegistryActorCatalog implements ActorCatalog {
  constructor(
    private readonly registry: RegistryService,
    private readonly byModel: ReadonlyMap<string, Actor>,
  ) {}

  async resolve(name: string): Promise<Actor | undefined> {
    const entity = await this.registry.lookup('actor', name);
    if (!entity) return undefined;
    const d = entity.definition as ActorDefinition;
    const actor = d.provider === 'builtin' ? this.byModel.get(d.model) : undefined;
    if (!actor) {
      throw new AppError(
        'INVALID_STATE',
        `Actor ${name} uses provider ${d.provider}, which cannot hold a chat in this release`,
        {
          details: { entity: 'actor', name, provider: d.provider },
          hint: 'chat with a provider: builtin actor (e.g. builtin/echo); LLM providers come in a later release',
        },
      );
    }
    return actor;
  }

  names(): string[] {
    return [...this.byModel.values()].map((a) => a.name);
  }
}
