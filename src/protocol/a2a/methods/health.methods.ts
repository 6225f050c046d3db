import { bindFamily } from '../method.ts';
import * as c from '../contracts/health.contract.ts';

/** The health family bound to the facade (its contracts, for clients too, are in contracts/health.contract.ts). */
export const HEALTH_ROWS = bindFamily(c.HEALTH_METHODS, {
  healthCheck: (facade) => facade.health.check(),
  diagnosticsRun: (facade, _p, ctx) => facade.health.diagnose(ctx.principal),
});
