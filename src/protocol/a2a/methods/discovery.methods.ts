import { z } from 'zod';
import { defineMethod } from '../method.js';

export const rpcDiscover = defineMethod({
  name: 'rpc.discover',
  surface: 'extension',
  summary: 'The OpenRPC document of every method this server serves (also at GET /openrpc.json).',
  permission: 'card:read',
  params: z.object({}).strict(),
  result: z.object({ openrpc: z.string(), info: z.object({}).loose(), methods: z.array(z.object({ name: z.string() }).loose()) }).loose(),
  call: async (_f, _p, ctx) => ctx.card.openRpc() as { openrpc: string; info: Record<string, unknown>; methods: Array<{ name: string }> },
});
