import type { AuditEventKind } from '../../../application/index.ts';
import { bindFamily } from '../method.ts';
import * as c from '../contracts/account.contract.ts';

/** The account family bound to the facade (its contracts, for clients too, are in contracts/account.contract.ts). */
export const ACCOUNT_ROWS = bindFamily(c.ACCOUNT_METHODS, {
  whoami: (f, _p, ctx) => f.users.whoami(ctx.principal),
  userAdd: (f, p, ctx) => f.users.add(p, ctx.principal),
  userList: (f, _p, ctx) => f.users.list(ctx.principal),
  userDisable: (f, p, ctx) => f.users.disable(p.name, ctx.principal),
  userEnable: (f, p, ctx) => f.users.enable(p.name, ctx.principal),
  keyCreate: (f, p, ctx) => f.keys.create(p, ctx.principal),
  keyList: (f, p, ctx) => f.keys.list(p, ctx.principal),
  keyRevoke: (f, p, ctx) => f.keys.revoke(p.id, ctx.principal),
  auditList: (f, p, ctx) => f.audit.list({ ...p, event: p.event as AuditEventKind | undefined }, ctx.principal),
});
