import { z } from 'zod';
import { EntityName } from './names.ts';
import { Description } from './definition-fields.ts';
import { POLICY_DECISIONS, PolicyRule } from '../plan/policy.ts';

/** What a plan's tool calls may do without a person, and whether its apply asks (see domain/plan/policy.ts). */
export const AutomationProfileDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    default: z.enum(POLICY_DECISIONS, { message: 'must be allow, ask or deny' }),
    applyApproval: z.boolean().optional(),
    rules: z.array(PolicyRule).max(200, 'at most 200 rules').optional(),
  })
  .strict();
export type AutomationProfileDefinition = z.infer<typeof AutomationProfileDefinition>;
