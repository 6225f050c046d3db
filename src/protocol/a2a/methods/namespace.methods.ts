import { bindFamily } from '../method.ts';
import * as c from '../contracts/namespace.contract.ts';

/** The namespace family bound to the facade (its contracts, for clients too, are in contracts/namespace.contract.ts). */
export const NAMESPACE_ROWS = bindFamily(c.NAMESPACE_METHODS, {
  namespaceList: (f, _p, ctx) => f.namespaces.list(ctx.principal),
  namespaceShow: (f, p, ctx) => f.namespaces.show(p.name, ctx.principal),
  namespaceMembers: (f, p, ctx) => f.namespaces.members(p.name, ctx.principal),
  namespaceCreate: (f, p, ctx) => f.namespaces.create(p.name, ctx.principal),
  namespaceDelete: (f, p, ctx) => f.namespaces.delete(p.name, { force: p.force }, ctx.principal),
  namespaceAddMember: (f, p, ctx) => f.namespaces.addMember(p.namespace, p.user, p.role, ctx.principal),
  namespaceRemoveMember: (f, p, ctx) => f.namespaces.removeMember(p.namespace, p.user, ctx.principal),
  namespaceSetRole: (f, p, ctx) => f.namespaces.setRole(p.namespace, p.user, p.role, ctx.principal),
  namespaceGrants: (f, p, ctx) => f.capabilities.list(p.namespace, ctx.principal),
  namespaceGrant: (f, p, ctx) => f.capabilities.grant(p.namespace, p.capability, p.paths, ctx.principal),
  namespaceRevoke: (f, p, ctx) => f.capabilities.revoke(p.namespace, p.capability, ctx.principal),
  namespaceLimitsGet: (f, p, ctx) => f.quota.get(p.namespace, ctx.principal),
  namespaceLimitsSet: (f, { namespace, ...changes }, ctx) => f.quota.set(namespace, changes, ctx.principal),
});
