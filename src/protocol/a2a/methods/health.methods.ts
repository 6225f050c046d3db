import { bindUnary } from '../method.ts';
import * as c from '../contracts/health.contract.ts';

/** The health contracts bound to the facade (the contracts, for clients too, are in contracts/health.contract.ts). */
export const healthCheck = bindUnary(c.healthCheck, (facade) => facade.health.check());
export const diagnosticsRun = bindUnary(c.diagnosticsRun, (facade, _p, ctx) => facade.health.diagnose(ctx.principal));
