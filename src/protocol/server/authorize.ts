import type { Principal } from '../../application/index.js';
import { AppError } from '../../domain/errors.js';
import { roleGrants, type Role } from '../../domain/permissions.js';
import type { MethodDef } from '../a2a/method.js';

/**
 * The dispatcher's authorize step: the permission the method's row declares, against the caller's
 * role in the namespace the request acts in — its `tenant` when it names one (A2A's tenant is our
 * namespace), otherwise any namespace the caller belongs to (services check the namespace of each
 * entity they touch). A namespace the caller does not belong to looks like one that does not exist.
 */
export function authorize(
  principal: Principal,
  method: Pick<MethodDef, 'name' | 'permission'>,
  rawParams: unknown,
): void {
  const tenant = tenantOf(rawParams);
  let roles: Role[];
  if (tenant !== undefined) {
    const role = principal.roles[tenant];
    if (!role)
      throw new AppError('NOT_FOUND', `Namespace ${tenant} was not found`, {
        details: { entity: 'namespace', name: tenant },
        hint: 'see your namespaces with `agents namespace list`',
      });
    roles = [role];
  } else {
    roles = Object.values(principal.roles);
  }
  if (roles.some((r) => roleGrants(r, method.permission))) return;
  const held = roles.length
    ? `your role (${[...new Set(roles)].join(', ')}) does not grant it`
    : 'you belong to no namespace';
  throw new AppError(
    'FORBIDDEN',
    `You may not call ${method.name}: it needs permission ${method.permission}, and ${held}`,
    {
      details: { permission: method.permission, ...(tenant !== undefined ? { namespace: tenant } : {}) },
      hint: 'ask an owner or admin of the namespace for the member role',
    },
  );
}

/** The request's tenant, when it names one (an empty string is the default: no tenant). */
function tenantOf(raw: unknown): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const t = (raw as Record<string, unknown>)['tenant'];
  return typeof t === 'string' && t !== '' ? t : undefined;
}
