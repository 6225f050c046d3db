import { bindFamily } from '../method.ts';
import * as c from '../contracts/push.contract.ts';

/** The push family bound to the facade (its contracts, for clients too, are in contracts/push.contract.ts). */
export const PUSH_ROWS = bindFamily(c.PUSH_METHODS, {
  createPushConfig: (facade, p, ctx) => facade.push.create(p.taskId, p, ctx.principal),
  getPushConfig: (facade, p, ctx) => facade.push.get(p.taskId, p.id, ctx.principal),
  listPushConfigs: (facade, p, ctx) => facade.push.list(p.taskId, ctx.principal, p),
  deletePushConfig: async (facade, p, ctx) => {
    await facade.push.delete(p.taskId, p.id, ctx.principal);
    return {};
  },
});
