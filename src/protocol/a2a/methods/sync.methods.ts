import { bindUnary } from '../method.ts';
import * as c from '../contracts/sync.contract.ts';

/** The sync contracts bound to the facade (the contracts, for clients too, are in contracts/sync.contract.ts). */
export const syncConnect = bindUnary(c.syncConnect, (f, p, ctx) => f.sync.connect(p, ctx.principal));
export const syncDisconnect = bindUnary(c.syncDisconnect, (f, _p, ctx) => f.sync.disconnect(ctx.principal));
export const syncConnection = bindUnary(c.syncConnection, (f, _p, ctx) => f.sync.connection(ctx.principal));
export const syncStatus = bindUnary(c.syncStatus, (f, p, ctx) => f.sync.status(p, ctx.principal));
export const syncPull = bindUnary(c.syncPull, (f, p, ctx) => f.sync.pull(p, ctx.principal));
export const syncPush = bindUnary(c.syncPush, (f, p, ctx) => f.sync.push(p, ctx.principal));
