import type { Role } from '../../domain/permissions.js';

/** Who is calling. Local mode has one principal, the local user; server mode authenticates one. */
export interface Principal {
  readonly id: string;
  readonly kind: 'local' | 'token';
  /** The namespaces the principal belongs to, with its role in each (a namespace not listed is foreign). */
  readonly roles: Readonly<Record<string, Role>>;
}

/** The local user owns `local/`, so holds every permission there. */
export const LOCAL_PRINCIPAL: Principal = Object.freeze({
  id: 'local',
  kind: 'local',
  roles: Object.freeze({ local: 'owner' }),
});

/** The namespaces a principal belongs to. */
export function namespacesOf(principal: Principal): string[] {
  return Object.keys(principal.roles);
}
