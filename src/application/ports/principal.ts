import type { Role } from '../../domain/permissions.ts';

/**
 * Who is calling, and where the request acts. Local mode has one principal, the local user;
 * server mode authenticates one per request (an API key or a JWT), and the dispatcher sets the
 * namespace the request acts in (its `tenant`, else the caller's default namespace).
 */
export interface Principal {
  /** The user's name (`local` in local mode). */
  readonly id: string;
  /** How the caller proved who it is: the local user, an API key, or a JWT from the OIDC issuer. */
  readonly kind: 'local' | 'key' | 'jwt' | 'system';
  /** The namespaces the principal belongs to, with its role in each (a namespace not listed is foreign). */
  readonly roles: Readonly<Record<string, Role>>;
  /** A server administrator: manages users and reads the audit log (not a role in any namespace). */
  readonly admin: boolean;
  /** Where requests without a `tenant` act: the user's own namespace. */
  readonly defaultNamespace: string;
  /**
   * The namespace this request acts in: tasks, sessions, plans and push configs are kept and
   * looked up there. Authentication sets it to the default namespace; the dispatcher to the tenant.
   */
  readonly namespace: string;
  /** Which credential authenticated the request (an API key's id, a JWT's hash): for the audit log. */
  readonly credential?: string;
}

/** The local user owns `local/`, so holds every permission there. */
export const LOCAL_PRINCIPAL: Principal = Object.freeze({
  id: 'local',
  kind: 'local',
  roles: Object.freeze({ local: 'owner' }),
  admin: true,
  defaultNamespace: 'local',
  namespace: 'local',
});

/**
 * A principal from its parts, the rest defaulted: not an administrator; the default namespace
 * is the first one it has a role in (else its own name); it acts there.
 */
export function makePrincipal(
  p: Pick<Principal, 'id' | 'roles'> & Partial<Omit<Principal, 'id' | 'roles'>>,
): Principal {
  const defaultNamespace = p.defaultNamespace ?? Object.keys(p.roles)[0] ?? p.id;
  return {
    kind: 'key',
    admin: false,
    ...p,
    defaultNamespace,
    namespace: p.namespace ?? defaultNamespace,
  };
}

/** The platform acting on its own for work that lives in a namespace (settling stranded tasks). */
export function systemPrincipalFor(namespace: string): Principal {
  return {
    id: 'system',
    kind: 'system',
    roles: { [namespace]: 'owner' },
    admin: false,
    defaultNamespace: namespace,
    namespace,
  };
}

/**
 * The principal's role in a namespace, if any. Own properties only: a namespace named like an
 * Object.prototype member (`constructor`, `toString`) is not a role.
 */
export function roleIn(principal: Pick<Principal, 'roles'>, namespace: string): Role | undefined {
  return Object.hasOwn(principal.roles, namespace) ? principal.roles[namespace] : undefined;
}

/** The namespaces a principal belongs to. */
export function namespacesOf(principal: Principal): string[] {
  return Object.keys(principal.roles);
}
