import { bindFamily } from '../method.ts';
import * as c from '../contracts/sync.contract.ts';

/** The sync family bound to the facade (its contracts, for clients too, are in contracts/sync.contract.ts). */
export const SYNC_ROWS = bindFamily(c.SYNC_METHODS, {
  syncConnect: (f, p, ctx) => f.sync.connect(p, ctx.principal),
  syncDisconnect: (f, _p, ctx) => f.sync.disconnect(ctx.principal),
  syncConnection: (f, _p, ctx) => f.sync.connection(ctx.principal),
  syncStatus: (f, p, ctx) => f.sync.status(p, ctx.principal),
  syncPull: (f, p, ctx) => f.sync.pull(p, ctx.principal),
  syncPush: (f, p, ctx) => f.sync.push(p, ctx.principal),
});
