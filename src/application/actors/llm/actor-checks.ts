import { actorEndpoint, namesApiKey, type ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import type { ApiKeys, LanguageModels } from '../../ports/language-model.port.ts';
import type { DiagnosticCheck } from '../../ports/system.port.ts';
import { apiKeyFix } from './api-key-fix.ts';
import { messageOf } from '../../../domain/errors.ts';

/** How long diagnostics waits for one endpoint. */
const CHECK_TIMEOUT_MS = 5000;

/**
 * One diagnostics check per LLM actor: is its key there (when it names one), and does its
 * endpoint answer and take the key. Endpoints are asked in parallel, each for at most 5 s.
 */
export async function actorChecks(
  actors: ReadonlyArray<{ name: string; definition: ActorDefinition }>,
  models: LanguageModels,
  keys: ApiKeys,
): Promise<DiagnosticCheck[]> {
  const llm = actors.filter((a) => a.definition.provider !== 'builtin');
  return Promise.all(
    llm.map(async ({ name, definition: d }): Promise<DiagnosticCheck> => {
      const check = (status: DiagnosticCheck['status'], detail: string, hint?: string): DiagnosticCheck => ({
        name: `actor ${name}`,
        category: 'actors',
        status,
        detail,
        ...(hint ? { hint } : {}),
      });
      const endpoint = actorEndpoint(d);
      const key = await keys.resolve(d);
      if (namesApiKey(d) && !key.present)
        return check('fail', `${d.provider} ${d.model} at ${endpoint}: no API key (${key.problem})`, apiKeyFix(d));
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), CHECK_TIMEOUT_MS);
      try {
        const r = await models.check(d, key.present ? key.key : undefined, ctl.signal);
        const keyNote = key.present ? `key from ${key.source}` : 'no key';
        return check(r.ok ? 'ok' : 'fail', `${d.provider} ${d.model} at ${endpoint} (${keyNote}): ${r.detail}`, r.hint);
      } catch (err) {
        return check('fail', `${d.provider} ${d.model} at ${endpoint}: ${messageOf(err)}`);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}
