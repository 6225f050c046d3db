import { z } from 'zod';
import { defineContract, type ContractFamily } from '../contract.ts';

export const rpcDiscover = defineContract({
  name: 'rpc.discover',
  surface: 'extension',
  summary: 'The OpenRPC document of every method this server serves (also at GET /openrpc.json).',
  permission: 'card:read',
  params: z.object({}).strict(),
  result: z
    .object({
      openrpc: z.string(),
      info: z.object({}).loose(),
      methods: z.array(z.object({ name: z.string() }).loose()),
    })
    .loose(),
});

/** The discovery family: every row of discovery.contract.ts, in the table's order. */
export const DISCOVERY_METHODS = {
  rpcDiscover,
} as const satisfies ContractFamily;
