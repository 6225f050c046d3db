/**
 * Who may do what (DESIGN.md §3.7): roles per namespace, and the permissions each role grants. The
 * method table names the permission a method needs; the dispatcher checks it against these.
 */

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  'task:read',
  'task:write',
  'session:read',
  'session:write',
  'system:read',
  'card:read',
  'registry:read',
  'registry:write',
  'plan:read',
  'plan:write',
] as const;
/** What a method needs the caller to be allowed to do. */
export type Permission = (typeof PERMISSIONS)[number];

const READ: readonly Permission[] = PERMISSIONS.filter((p) => p.endsWith(':read'));

/** The permissions of each role in a namespace: a viewer reads; members and above also write. */
const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  owner: new Set(PERMISSIONS),
  admin: new Set(PERMISSIONS),
  member: new Set(PERMISSIONS),
  viewer: new Set(READ),
};

export function isWrite(permission: Permission): boolean {
  return !READ.includes(permission);
}

export function roleGrants(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}
