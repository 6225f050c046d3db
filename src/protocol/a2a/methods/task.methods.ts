import { bindFamily } from '../method.ts';
import * as c from '../contracts/task.contract.ts';

/** The task family bound to the facade (its contracts, for clients too, are in contracts/task.contract.ts). */
export const TASK_ROWS = bindFamily(c.TASK_METHODS, {
  getTask: (facade, p, ctx) => facade.tasks.getForClient(p.id, p.historyLength, ctx.principal),
  listTasks: (facade, p, ctx) =>
    facade.tasks.list({ ...p, status: p.status === 'TASK_STATE_UNSPECIFIED' ? undefined : p.status }, ctx.principal),
  cancelTask: (facade, p, ctx) => facade.tasks.cancel(p.id, ctx.principal),
  subscribeToTask: (facade, p, ctx) => facade.tasks.subscribe(p.id, ctx.principal, ctx.lastEventSeq),
});
