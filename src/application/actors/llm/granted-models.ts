/**
 * The language models as a namespace's grants allow (issue #35): a request goes out with
 * `privateNetwork` set when the actor's namespace holds the private-network capability (or in
 * local mode), so the egress guard lets it reach a loopback or private endpoint; otherwise the
 * guard refuses such an address when it connects.
 */
import type { ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { namespaceOf } from '../../../domain/registry/names.ts';
import type { EndpointCheck, LanguageModels, ModelEvent, ModelRequest } from '../../ports/language-model.port.ts';
import type { CapabilityService } from '../../registry/capability.service.ts';

export function grantedModels(models: LanguageModels, capabilities: Pick<CapabilityService, 'holds'>): LanguageModels {
  const privateNetwork = (actor: ActorDefinition): Promise<boolean> =>
    capabilities.holds(namespaceOf(actor.name), 'private-network');
  return {
    async *stream(req: ModelRequest): AsyncIterable<ModelEvent> {
      yield* models.stream({ ...req, privateNetwork: await privateNetwork(req.actor) });
    },
    async check(actor, apiKey, signal): Promise<EndpointCheck> {
      return models.check(actor, apiKey, signal, { privateNetwork: await privateNetwork(actor) });
    },
  };
}
