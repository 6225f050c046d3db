import { AppError } from '../../domain/errors.ts';
import { BUILTIN_NAMESPACE } from '../../domain/registry/names.ts';
import { roleIn, type Principal } from '../ports/principal.ts';
import type { Role } from '../ports/registry.repository.port.ts';

const WRITE_ROLES: ReadonlySet<Role> = new Set(['owner', 'admin', 'member']);

/**
 * What a principal may read and write of namespaces, from its roles alone. Kept apart from
 * NamespaceService so that the registry, which needs only this, is built before the namespace
 * service (whose deletion clears plans and sessions, which need the registry): no cycle.
 */
export class NamespaceAccess {
  /** Namespaces whose entities the principal may read. */
  readable(principal: Principal): Promise<string[]> {
    return Promise.resolve([...Object.keys(principal.roles), BUILTIN_NAMESPACE]);
  }

  /** Refuses unless the principal may write entities in the namespace. */
  assertWritable(namespace: string, principal: Principal): Promise<void> {
    try {
      checkWritable(namespace, principal);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Whether the principal may write entities in the namespace (member or above; never builtin). */
  mayWrite(namespace: string, principal: Principal): Promise<boolean> {
    const role = roleIn(principal, namespace);
    return Promise.resolve(namespace !== BUILTIN_NAMESPACE && role !== undefined && WRITE_ROLES.has(role));
  }
}

function checkWritable(namespace: string, principal: Principal): void {
  if (namespace === BUILTIN_NAMESPACE) {
    throw new AppError('FORBIDDEN', 'builtin/ entities ship with CleverAgents and cannot be changed', {
      hint: 'use your own namespace, e.g. local/',
    });
  }
  const role = roleIn(principal, namespace);
  if (!role || !WRITE_ROLES.has(role)) {
    throw new AppError('FORBIDDEN', `You may not write to namespace ${namespace}`, {
      details: { namespace, role: role ?? null },
      hint: 'see your namespaces with `agents namespace list`',
    });
  }
}
