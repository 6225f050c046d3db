import type { ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { namespaceOf } from '../../../domain/registry/names.ts';

/**
 * What to do about an actor's missing key, by where the actor says it is: its environment
 * variable, its secret (of the actor's own namespace), or its key file. One sentence without an
 * ending, so each caller adds what comes next ("then send again").
 */
export function apiKeyFix(
  def: Pick<ActorDefinition, 'name' | 'apiKeyEnv' | 'apiKeyFile' | 'apiKeySecret'>,
  where: { server?: boolean } = {},
): string {
  if (def.apiKeyEnv !== undefined)
    return `set ${def.apiKeyEnv} in the environment of the agent${where.server ? ' (the server process)' : ''}`;
  if (def.apiKeySecret !== undefined)
    return `set the secret: agents secret set ${def.apiKeySecret} --namespace ${namespaceOf(def.name)}`;
  return `write the key to ${def.apiKeyFile ?? 'the apiKeyFile'} (chmod 600)`;
}
