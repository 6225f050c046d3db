import { bindUnary } from '../method.js';
import * as c from '../contracts/health.contract.js';

/** The health contracts bound to the facade (the contracts, for clients too, are in contracts/health.contract.ts). */
export const healthCheck = bindUnary(c.healthCheck, (facade) => facade.health.check());
export const diagnosticsRun = bindUnary(c.diagnosticsRun, (facade, _p, ctx) => facade.health.diagnose(ctx.principal));
