import { namespaceNotFound, roleIn, type Principal } from '../../application/index.ts';

import { AppError } from '../../domain/errors.ts';
import { permissionLevel, roleGrants, type MethodScope, type Role } from '../../domain/permissions.ts';
import { BUILTIN_NAMESPACE } from '../../domain/registry/names.ts';
import type { MethodDef } from '../a2a/method.ts';

const SEGMENT = /^[a-z][a-z0-9_-]{0,62}$/;
const ENTITY = /^([a-z][a-z0-9_-]{0,62})\/[a-z][a-z0-9_-]{0,62}$/;

/**
 * The dispatcher's authorize step, for every method: the permission the method's row declares,
 * checked where the row says the method acts —
 * - caller-level permissions (`card:read`, `system:read`, `account:self`): any authenticated caller;
 * - `server:admin`: server administrators only;
 * - namespace-level ones: the caller's role in the namespace the request acts in (the row's
 *   scope: the `tenant` or the default namespace, the namespace a parameter names, or any of the
 *   caller's namespaces).
 *
 * Returns the principal the call runs as, its `namespace` set to where the request acts (and, for
 * `any` methods given a tenant, its roles narrowed to that one namespace). A namespace the caller
 * does not belong to looks exactly like one that does not exist.
 */
export function authorize(
  principal: Principal,
  method: Pick<MethodDef, 'name' | 'permission' | 'scope'>,
  rawParams: unknown,
): Principal {
  const tenant = tenantOf(rawParams);
  const level = permissionLevel(method.permission);
  if (level === 'caller') return tenant === undefined ? principal : inTenant(principal, tenant);
  if (level === 'server') {
    if (principal.admin) return tenant === undefined ? principal : inTenant(principal, tenant);
    throw new AppError('FORBIDDEN', `You may not call ${method.name}: it is for server administrators`, {
      details: { permission: method.permission },
      hint: 'ask a server administrator (see `agents whoami`)',
    });
  }
  const scope: MethodScope = method.scope ?? 'tenant';
  if (scope === 'tenant') {
    const namespace = tenant ?? principal.defaultNamespace;
    check(principal, method, namespace, tenant !== undefined);
    return namespace === principal.namespace ? principal : { ...principal, namespace };
  }
  if (scope === 'any') {
    if (tenant !== undefined) {
      const role = check(principal, method, tenant, true);
      return { ...principal, namespace: tenant, roles: { [tenant]: role } };
    }
    grantedSomewhere(principal, method);
    return principal;
  }
  // A parameter names the namespace; without one (params validation refuses it) the caller must
  // still hold the permission somewhere.
  const named = namedNamespace(rawParams, scope);
  const at = tenant !== undefined ? inTenant(principal, tenant) : principal;
  if (named === undefined) {
    grantedSomewhere(principal, method);
    return at;
  }
  if (named === BUILTIN_NAMESPACE) {
    // Everyone reads builtin/; nobody writes it (the service says why).
    if (!roleGrants('viewer', method.permission)) builtinIsReadOnly(method);
    return at;
  }
  // An entity in a namespace the caller does not belong to: the service answers as it does for
  // a missing entity (it sees only the caller's namespaces), so neither can be told apart.
  if (scope.form === 'entity' && !roleIn(principal, named)) return at;
  check(principal, method, named, true);
  return at;
}

/** Refuses unless the caller's role in at least one namespace grants the permission. */
function grantedSomewhere(principal: Principal, method: Pick<MethodDef, 'name' | 'permission'>): void {
  const roles = Object.values(principal.roles);
  if (!roles.some((r) => roleGrants(r, method.permission))) throw forbidden(method, roles, undefined);
}

/** A tenant on a method that does not act in one namespace: still only one of the caller's. */
function inTenant(principal: Principal, tenant: string): Principal {
  if (!roleIn(principal, tenant)) throw namespaceNotFound(tenant);
  return tenant === principal.namespace ? principal : { ...principal, namespace: tenant };
}

/** The caller's role in a namespace, when it grants the permission; else the refusal. */
function check(
  principal: Principal,
  method: Pick<MethodDef, 'name' | 'permission'>,
  namespace: string,
  named: boolean,
): Role {
  const role = roleIn(principal, namespace);
  if (!role) {
    if (named) throw namespaceNotFound(namespace);
    throw new AppError('FORBIDDEN', `You may not call ${method.name}: you belong to no namespace`, {
      details: { permission: method.permission },
      hint: 'ask an owner or admin of a namespace to add you, or pass a tenant you belong to',
    });
  }
  if (!roleGrants(role, method.permission)) throw forbidden(method, [role], namespace);
  return role;
}

function forbidden(method: Pick<MethodDef, 'name' | 'permission'>, roles: Role[], namespace: string | undefined) {
  const held = roles.length
    ? `your role (${[...new Set(roles)].join(', ')}) does not grant it`
    : 'you belong to no namespace';
  return new AppError(
    'FORBIDDEN',
    `You may not call ${method.name}: it needs permission ${method.permission}, and ${held}${namespace !== undefined ? ` in ${namespace}` : ''}`,
    {
      details: { permission: method.permission, ...(namespace !== undefined ? { namespace } : {}) },
      hint:
        method.permission === 'namespace:manage' || method.permission === 'namespace:delete'
          ? 'ask an owner of the namespace'
          : 'ask an owner or admin of the namespace for the member role',
    },
  );
}

function builtinIsReadOnly(method: Pick<MethodDef, 'permission'>): never {
  throw new AppError('FORBIDDEN', 'builtin/ entities ship with CleverAgents and cannot be changed', {
    details: { permission: method.permission, namespace: BUILTIN_NAMESPACE },
    hint: 'use your own namespace, e.g. local/',
  });
}

/** The namespace a scoped parameter names, when it is there and well formed. */
function namedNamespace(raw: unknown, scope: { param: string; form: 'namespace' | 'entity' }): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const v = (raw as Record<string, unknown>)[scope.param];
  if (typeof v !== 'string') return undefined;
  if (scope.form === 'namespace') return SEGMENT.test(v) ? v : undefined;
  // A bare entity name means local/name (see EntityName).
  if (SEGMENT.test(v)) return 'local';
  return ENTITY.exec(v)?.[1];
}

/** The request's tenant, when it names one (an empty string is the default: no tenant). */
export function tenantOf(raw: unknown): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const t = (raw as Record<string, unknown>)['tenant'];
  if (t === undefined || t === '') return undefined;
  if (typeof t !== 'string' || !SEGMENT.test(t)) {
    throw new AppError('INVALID_PARAMS', 'Invalid parameters: tenant must be a namespace name', {
      fields: [
        {
          field: 'tenant',
          description: 'must be lowercase letters, digits, - and _, starting with a letter (at most 63)',
        },
      ],
    });
  }
  return t;
}
