import { bindUnary } from '../method.ts';
import * as c from '../contracts/context.contract.ts';

/** The context contracts bound to the facade (the contracts, for clients too, are in contracts/context.contract.ts). */
export const contextShow = bindUnary(c.contextShow, (f, p, ctx) => f.context.show(p, ctx.principal));
export const contextSet = bindUnary(c.contextSet, (f, p, ctx) => f.context.set(p, ctx.principal));
export const contextInspect = bindUnary(c.contextInspect, (f, p, ctx) => f.context.inspect(p, ctx.principal));
export const contextSimulate = bindUnary(c.contextSimulate, (f, p, ctx) => f.context.simulate(p, ctx.principal));
