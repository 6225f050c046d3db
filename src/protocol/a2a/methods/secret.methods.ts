import { bindFamily } from '../method.ts';
import * as c from '../contracts/secret.contract.ts';

/** The secret family bound to the facade (its contracts, for clients too, are in contracts/secret.contract.ts). */
export const SECRET_ROWS = bindFamily(c.SECRET_METHODS, {
  secretSet: (f, p, ctx) => f.secrets.set({ namespace: p.namespace, name: p.name, value: p.value }, ctx.principal),
  secretList: (f, p, ctx) => f.secrets.list(p.namespace, ctx.principal),
  secretRemove: (f, p, ctx) => f.secrets.remove({ namespace: p.namespace, name: p.name }, ctx.principal),
});
