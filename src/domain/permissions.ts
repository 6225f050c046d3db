/**
 * Who may do what (DESIGN.md §3.7): roles per namespace, and the permissions each role grants. The
 * method table names the permission a method needs and where it acts (its scope); the dispatcher
 * checks the one against the caller's role in the other.
 */

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Permissions that authentication alone grants: any caller who is signed in has them. */
export const CALLER_PERMISSIONS = ['card:read', 'system:read', 'account:self'] as const;
/** Permissions only server administrators hold (users, the audit log, diagnostics). */
export const SERVER_PERMISSIONS = ['server:admin'] as const;
/** Permissions a role in a namespace grants. */
export const NAMESPACE_PERMISSIONS = [
  'task:read',
  'task:write',
  'session:read',
  'session:write',
  'registry:read',
  'registry:write',
  'plan:read',
  'plan:write',
  'namespace:manage',
  'namespace:delete',
] as const;

export const PERMISSIONS = [...CALLER_PERMISSIONS, ...SERVER_PERMISSIONS, ...NAMESPACE_PERMISSIONS] as const;
/** What a method needs the caller to be allowed to do. */
export type Permission = (typeof PERMISSIONS)[number];
export type NamespacePermission = (typeof NAMESPACE_PERMISSIONS)[number];

export type PermissionLevel = 'caller' | 'server' | 'namespace';

export function permissionLevel(p: Permission): PermissionLevel {
  if ((CALLER_PERMISSIONS as readonly string[]).includes(p)) return 'caller';
  if ((SERVER_PERMISSIONS as readonly string[]).includes(p)) return 'server';
  return 'namespace';
}

/**
 * Where a namespace-level method acts, so the dispatcher knows which role to check:
 * - `tenant`: in one namespace, the request's `tenant`, else the caller's default namespace (tasks,
 *   sessions, plans, push configs live there);
 * - `any`: across the caller's namespaces (lists and adds whose entities carry their namespace);
 *   a `tenant` narrows it to that one namespace;
 * - `{ param, form }`: in the namespace a parameter names, either directly (`namespace`) or as the
 *   first segment of an entity name (`entity`).
 */
export type MethodScope = 'tenant' | 'any' | { param: string; form: 'namespace' | 'entity' };

const READ: readonly Permission[] = NAMESPACE_PERMISSIONS.filter((p) => p.endsWith(':read'));
const MEMBER: readonly Permission[] = NAMESPACE_PERMISSIONS.filter((p) => !p.startsWith('namespace:'));

/**
 * The permissions of each role in a namespace: a viewer reads; a member also writes; an admin
 * also manages members; only an owner deletes the namespace.
 */
const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  owner: new Set(NAMESPACE_PERMISSIONS),
  admin: new Set([...MEMBER, 'namespace:manage']),
  member: new Set(MEMBER),
  viewer: new Set(READ),
};

/** Whether a permission changes something (a viewer's role grants none of these). */
export function isWrite(permission: Permission): boolean {
  return permissionLevel(permission) === 'namespace' && !READ.includes(permission);
}

/** Whether a role in a namespace grants a namespace-level permission (never a caller or server one). */
export function roleGrants(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/** Roles an actor of role `by` may hand out or take away: an owner any, an admin any but owner. */
export function mayAssign(by: Role, role: Role): boolean {
  if (by === 'owner') return true;
  return by === 'admin' && role !== 'owner';
}
