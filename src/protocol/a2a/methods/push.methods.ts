import { bindUnary } from '../method.ts';
import * as c from '../contracts/push.contract.ts';

/** The push contracts bound to the facade (the contracts, for clients too, are in contracts/push.contract.ts). */
export const createPushConfig = bindUnary(c.createPushConfig, (facade, p, ctx) =>
  facade.push.create(p.taskId, p, ctx.principal),
);
export const getPushConfig = bindUnary(c.getPushConfig, (facade, p, ctx) =>
  facade.push.get(p.taskId, p.id, ctx.principal),
);
export const listPushConfigs = bindUnary(c.listPushConfigs, (facade, p, ctx) =>
  facade.push.list(p.taskId, ctx.principal, p),
);
export const deletePushConfig = bindUnary(c.deletePushConfig, async (facade, p, ctx) => {
  await facade.push.delete(p.taskId, p.id, ctx.principal);
  return {};
});
