import { bindStream, bindUnary } from '../method.ts';
import * as c from '../contracts/task.contract.ts';

/** The task contracts bound to the facade (the contracts, for clients too, are in contracts/task.contract.ts). */
export const getTask = bindUnary(c.getTask, (facade, p, ctx) =>
  facade.tasks.getForClient(p.id, p.historyLength, ctx.principal),
);
export const listTasks = bindUnary(c.listTasks, (facade, p, ctx) =>
  facade.tasks.list({ ...p, status: p.status === 'TASK_STATE_UNSPECIFIED' ? undefined : p.status }, ctx.principal),
);
export const cancelTask = bindUnary(c.cancelTask, (facade, p, ctx) => facade.tasks.cancel(p.id, ctx.principal));
export const subscribeToTask = bindStream(c.subscribeToTask, (facade, p, ctx) =>
  facade.tasks.subscribe(p.id, ctx.principal, ctx.lastEventSeq),
);
