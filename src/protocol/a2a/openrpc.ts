import { z } from 'zod';
import type { MethodContract } from './contract.ts';

type Json = Record<string, unknown>;

/**
 * The OpenRPC document of every method the server serves, generated from the method table
 * (`GET /openrpc.json`, `rpc.discover`, docs/reference/openrpc.json). Params are by name; each property is one descriptor.
 */
export function buildOpenRpc(methods: readonly MethodContract[], info: { version: string; endpoint: string }): Json {
  return {
    openrpc: '1.3.2',
    info: {
      title: 'CleverAgents A2A JSON-RPC',
      version: info.version,
      description:
        'Standard A2A v1.0 operations and the _cleveragents/ extension methods (urn:cleveragents:extensions:v1).',
    },
    servers: [{ name: 'agent', url: info.endpoint }],
    methods: methods.map((m) => {
      const params = z.toJSONSchema(m.params, { io: 'input', unrepresentable: 'any' }) as Json;
      const properties = (params['properties'] ?? {}) as Record<string, Json>;
      const required = new Set((params['required'] as string[] | undefined) ?? []);
      const entry: Json = {
        name: m.name,
        summary: m.summary,
        paramStructure: 'by-name',
        params: Object.entries(properties).map(([name, schema]) => ({ name, required: required.has(name), schema })),
        result: {
          name: m.kind === 'stream' ? 'event' : 'result',
          schema: z.toJSONSchema(m.result, { unrepresentable: 'any' }),
        },
        'x-permission': m.permission,
        'x-surface': m.surface,
      };
      if (m.kind === 'stream') entry['x-streaming'] = true;
      if (m.aliases?.length) entry['x-aliases'] = [...m.aliases];
      if (m.v03?.name) entry['x-a2a-v0.3-name'] = m.v03.name;
      return entry;
    }),
  };
}
