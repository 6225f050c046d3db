/**
 * What a caller is shown of registry entries over the protocol: a definition's credential values
 * (env and header values, a URL's userinfo and query values: domain/registry/redact-definition.ts)
 * are hidden, so a namespace's viewers see what is configured without the credentials in it. A
 * caller who asks to `reveal` sees them for the entries of namespaces it may write — the people who
 * could put a credential there anyway, and what `agents sync` needs to copy definitions whole.
 * The service's own reads (running, planning, sync's local side) are never redacted.
 */
import { redactDefinition } from '../../domain/registry/redact-definition.ts';
import type { Principal } from '../ports/principal.ts';
import type { NamespaceAccess } from './namespace-access.service.ts';

export async function shownTo<E extends { namespace: string; definition: unknown }>(
  entries: readonly E[],
  principal: Principal,
  reveal: boolean,
  access: NamespaceAccess,
): Promise<E[]> {
  const writable = new Map<string, boolean>();
  const out: E[] = [];
  for (const e of entries) {
    let full = false;
    if (reveal) {
      if (!writable.has(e.namespace)) writable.set(e.namespace, await access.mayWrite(e.namespace, principal));
      full = writable.get(e.namespace) === true;
    }
    out.push(full ? e : { ...e, definition: redactDefinition(e.definition) });
  }
  return out;
}
