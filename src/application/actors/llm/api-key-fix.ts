import type { ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { namespaceOf } from '../../../domain/registry/names.ts';

/**
 * What to do about an actor's missing key, by where the actor says it is: its environment
 * variable, its secret (of the actor's own namespace), or its key file. One sentence without an
 * ending, so each caller adds what comes next ("then send again"). The variable is read where the
 * agent runs: on a server that is the `agents serve` process; a local agent is spawned by each
 * `agents` command and inherits its environment, so there it is the user's own shell. A caller
 * that does not know the mode gets wording true in both.
 */
export function apiKeyFix(
  def: Pick<ActorDefinition, 'name' | 'apiKeyEnv' | 'apiKeyFile' | 'apiKeySecret'>,
  where: { mode?: 'local' | 'server' | undefined } = {},
): string {
  if (def.apiKeyEnv !== undefined) {
    if (where.mode === 'local') return `set ${def.apiKeyEnv} in the environment you run \`agents\` in`;
    return `set ${def.apiKeyEnv} in the environment of the agent${where.mode === 'server' ? ' (the server process)' : ''}`;
  }
  if (def.apiKeySecret !== undefined)
    return `set the secret: agents secret set ${def.apiKeySecret} --namespace ${namespaceOf(def.name)}`;
  return `write the key to ${def.apiKeyFile ?? 'the apiKeyFile'} (chmod 600)`;
}
