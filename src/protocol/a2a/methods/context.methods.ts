import { bindFamily } from '../method.ts';
import * as c from '../contracts/context.contract.ts';

/** The context family bound to the facade (its contracts, for clients too, are in contracts/context.contract.ts). */
export const CONTEXT_ROWS = bindFamily(c.CONTEXT_METHODS, {
  contextShow: (f, p, ctx) => f.context.show(p, ctx.principal),
  contextSet: (f, p, ctx) => f.context.set(p, ctx.principal),
  contextInspect: (f, p, ctx) => f.context.inspect(p, ctx.principal),
  contextSimulate: (f, p, ctx) => f.context.simulate(p, ctx.principal),
});
