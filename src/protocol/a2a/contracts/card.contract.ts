import { z } from 'zod';
import { defineContract, type ContractFamily } from '../contract.ts';

/** The Agent Card's shape, loosely: the card itself is generated, not accepted. */
export const AgentCardSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    version: z.string(),
    supportedInterfaces: z.array(
      z.object({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string() }).loose(),
    ),
    provider: z.object({ organization: z.string(), url: z.string() }).loose().optional(),
    capabilities: z
      .object({
        streaming: z.boolean().optional(),
        pushNotifications: z.boolean().optional(),
        extendedAgentCard: z.boolean().optional(),
        extensions: z
          .array(
            z
              .object({
                uri: z.string(),
                description: z.string().optional(),
                required: z.boolean().optional(),
                params: z.record(z.string(), z.unknown()).optional(),
              })
              .loose(),
          )
          .optional(),
      })
      .loose(),
    skills: z.array(
      z.object({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) }).loose(),
    ),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
  })
  .loose();

export const getExtendedAgentCard = defineContract({
  name: 'GetExtendedAgentCard',
  proto: 'GetExtendedAgentCardRequest',
  aliases: ['getExtendedAgentCard'],
  surface: 'a2a',
  summary: 'The authenticated Agent Card: who you are and the JSON Schema of every method.',
  permission: 'card:read',
  params: z.object({ tenant: z.string().optional() }),
  result: AgentCardSchema,
  v03: {
    name: 'agent/getAuthenticatedExtendedCard',
    params: z.object({}).loose(),
    decode: () => ({}),
    encode: (c: unknown) => c,
  },
});

/** The card family: every row of card.contract.ts, in the table's order. */
export const CARD_METHODS = {
  getExtendedAgentCard,
} as const satisfies ContractFamily;
