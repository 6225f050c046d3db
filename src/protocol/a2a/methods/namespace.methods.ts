import { bindUnary } from '../method.js';
import * as c from '../contracts/namespace.contract.js';

/** The namespace contracts bound to the facade (the contracts, for clients too, are in contracts/namespace.contract.ts). */
export const namespaceList = bindUnary(c.namespaceList, (f, _p, ctx) => f.namespaces.list(ctx.principal));
export const namespaceShow = bindUnary(c.namespaceShow, (f, p, ctx) => f.namespaces.show(p.name, ctx.principal));
export const namespaceMembers = bindUnary(c.namespaceMembers, (f, p, ctx) =>
  f.namespaces.members(p.name, ctx.principal),
);
