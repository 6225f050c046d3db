import { bindUnary } from '../method.ts';
import * as c from '../contracts/discovery.contract.ts';

/** The discovery contracts bound to the facade (the contracts, for clients too, are in contracts/discovery.contract.ts). */
export const rpcDiscover = bindUnary(c.rpcDiscover, (_f, _p, ctx) =>
  Promise.resolve(
    ctx.card.openRpc() as { openrpc: string; info: Record<string, unknown>; methods: Array<{ name: string }> },
  ),
);
