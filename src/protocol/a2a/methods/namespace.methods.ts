import { bindUnary } from '../method.ts';
import * as c from '../contracts/namespace.contract.ts';

/** The namespace contracts bound to the facade (the contracts, for clients too, are in contracts/namespace.contract.ts). */
export const namespaceList = bindUnary(c.namespaceList, (f, _p, ctx) => f.namespaces.list(ctx.principal));
export const namespaceShow = bindUnary(c.namespaceShow, (f, p, ctx) => f.namespaces.show(p.name, ctx.principal));
export const namespaceMembers = bindUnary(c.namespaceMembers, (f, p, ctx) =>
  f.namespaces.members(p.name, ctx.principal),
);
export const namespaceCreate = bindUnary(c.namespaceCreate, (f, p, ctx) => f.namespaces.create(p.name, ctx.principal));
export const namespaceDelete = bindUnary(c.namespaceDelete, (f, p, ctx) =>
  f.namespaces.delete(p.name, { force: p.force }, ctx.principal),
);
export const namespaceAddMember = bindUnary(c.namespaceAddMember, (f, p, ctx) =>
  f.namespaces.addMember(p.namespace, p.user, p.role, ctx.principal),
);
export const namespaceRemoveMember = bindUnary(c.namespaceRemoveMember, (f, p, ctx) =>
  f.namespaces.removeMember(p.namespace, p.user, ctx.principal),
);
export const namespaceSetRole = bindUnary(c.namespaceSetRole, (f, p, ctx) =>
  f.namespaces.setRole(p.namespace, p.user, p.role, ctx.principal),
);
export const namespaceGrants = bindUnary(c.namespaceGrants, (f, p, ctx) =>
  f.capabilities.list(p.namespace, ctx.principal),
);
export const namespaceGrant = bindUnary(c.namespaceGrant, (f, p, ctx) =>
  f.capabilities.grant(p.namespace, p.capability, p.paths, ctx.principal),
);
export const namespaceRevoke = bindUnary(c.namespaceRevoke, (f, p, ctx) =>
  f.capabilities.revoke(p.namespace, p.capability, ctx.principal),
);
