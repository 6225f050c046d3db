import { bindUnary } from '../method.ts';
import * as c from '../contracts/secret.contract.ts';

/** The secret contracts bound to the facade (the contracts, for clients too, are in contracts/secret.contract.ts). */
export const secretSet = bindUnary(c.secretSet, (f, p, ctx) =>
  f.secrets.set({ namespace: p.namespace, name: p.name, value: p.value }, ctx.principal),
);
export const secretList = bindUnary(c.secretList, (f, p, ctx) => f.secrets.list(p.namespace, ctx.principal));
export const secretRemove = bindUnary(c.secretRemove, (f, p, ctx) =>
  f.secrets.remove({ namespace: p.namespace, name: p.name }, ctx.principal),
);
