import { bindFamily } from '../method.ts';
import * as c from '../contracts/discovery.contract.ts';

/** The discovery family bound to the facade (its contracts, for clients too, are in contracts/discovery.contract.ts). */
export const DISCOVERY_ROWS = bindFamily(c.DISCOVERY_METHODS, {
  rpcDiscover: (_f, _p, ctx) =>
    Promise.resolve(
      ctx.card.openRpc() as { openrpc: string; info: Record<string, unknown>; methods: Array<{ name: string }> },
    ),
});
