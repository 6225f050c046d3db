import type { AuditEventKind } from '../../../application/index.ts';
import { bindUnary } from '../method.ts';
import * as c from '../contracts/account.contract.ts';

/** The account contracts bound to the facade (the contracts, for clients too, are in contracts/account.contract.ts). */
export const whoami = bindUnary(c.whoami, (f, _p, ctx) => f.users.whoami(ctx.principal));
export const userAdd = bindUnary(c.userAdd, (f, p, ctx) => f.users.add(p, ctx.principal));
export const userList = bindUnary(c.userList, (f, _p, ctx) => f.users.list(ctx.principal));
export const userDisable = bindUnary(c.userDisable, (f, p, ctx) => f.users.disable(p.name, ctx.principal));
export const userEnable = bindUnary(c.userEnable, (f, p, ctx) => f.users.enable(p.name, ctx.principal));
export const keyCreate = bindUnary(c.keyCreate, (f, p, ctx) => f.keys.create(p, ctx.principal));
export const keyList = bindUnary(c.keyList, (f, p, ctx) => f.keys.list(p, ctx.principal));
export const keyRevoke = bindUnary(c.keyRevoke, (f, p, ctx) => f.keys.revoke(p.id, ctx.principal));
export const auditList = bindUnary(c.auditList, (f, p, ctx) =>
  f.audit.list({ ...p, event: p.event as AuditEventKind | undefined }, ctx.principal),
);
