import { z } from 'zod';
import { defineContract } from '../contract.ts';

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
