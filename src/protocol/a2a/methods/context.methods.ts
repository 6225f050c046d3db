import type { Principal, ServiceFacade } from '../../../application/index.js';
import type {
  ContextInspection,
  ContextQuery,
  ContextSetInput,
  ContextShowInput,
  ContextShowResult,
} from '../../../application/context/context.types.js';
import { bindUnary } from '../method.js';
import * as c from '../contracts/context.contract.js';

/** What the context methods need of the facade (ContextService: application/context/context.service.ts). */
interface ContextMethods {
  show(input: ContextShowInput, principal: Principal): Promise<ContextShowResult>;
  set(input: ContextSetInput, principal: Principal): Promise<ContextShowResult>;
  inspect(query: ContextQuery, principal: Principal): Promise<ContextInspection>;
  simulate(query: ContextQuery, principal: Principal): Promise<ContextInspection>;
}
// Until the facade has its `context` field (ContextService), the binding reads it by that name.
const ctxOf = (f: ServiceFacade): ContextMethods => (f as unknown as { context: ContextMethods }).context;

/** The context contracts bound to the facade (the contracts, for clients too, are in contracts/context.contract.ts). */
export const contextShow = bindUnary(c.contextShow, (f, p, ctx) => ctxOf(f).show(p, ctx.principal));
export const contextSet = bindUnary(c.contextSet, (f, p, ctx) => ctxOf(f).set(p, ctx.principal));
export const contextInspect = bindUnary(c.contextInspect, (f, p, ctx) => ctxOf(f).inspect(p, ctx.principal));
export const contextSimulate = bindUnary(c.contextSimulate, (f, p, ctx) => ctxOf(f).simulate(p, ctx.principal));
