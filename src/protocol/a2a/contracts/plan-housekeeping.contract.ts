import { z } from 'zod';
import { PlanDeletion, PlanPrune, PlanRebase } from '../../../domain/plan/housekeeping-views.ts';
import { PHASE_STATES } from '../../../domain/plan/plan.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

/** A plan's id, a unique prefix of it (4 or more characters), or `last` (as in plan.contract.ts). */
const PlanId = z
  .string()
  .regex(
    /^(last|[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{1,26})$/,
    'must be a plan id as printed by agents plan, a unique prefix of one (4 or more characters), or last',
  );

// Plan housekeeping came with extension version 1.2 (`since`).
export const planRebase = defineContract({
  name: '_cleveragents/plan/rebase',
  surface: 'extension',
  since: '1.2',
  summary:
    "Rebase the plan's sandbox onto the current head of its target branch; a conflict leaves the plan errored with the files (continue: after resolving them by hand).",
  permission: 'plan:write',
  params: z.object({ planId: PlanId, continue: z.boolean().optional() }).strict(),
  result: PlanRebase,
});

export const planDelete = defineContract({
  name: '_cleveragents/plan/delete',
  surface: 'extension',
  since: '1.2',
  summary: 'Delete a plan with its sandboxes and branches; changes never applied only with force.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, force: z.boolean().optional() }).strict(),
  result: PlanDeletion,
});

export const planPrune = defineContract({
  name: '_cleveragents/plan/prune',
  surface: 'extension',
  since: '1.2',
  summary:
    'Delete your plans in some states (default applied, cancelled) not updated for a while (default 7 days), with their sandboxes and branches; reports what was removed and what was kept and why.',
  permission: 'plan:write',
  params: z
    .object({
      olderThanSeconds: z
        .number()
        .int()
        .min(0)
        .max(100 * 365 * 24 * 3600)
        .optional(),
      states: z.array(z.enum(PHASE_STATES)).min(1, 'name at least one state').max(PHASE_STATES.length).optional(),
      force: z.boolean().optional(),
      dryRun: z.boolean().optional(),
    })
    .strict(),
  result: PlanPrune,
});

/** The plan housekeeping family: every row of plan-housekeeping.contract.ts, in the table's order. */
export const PLAN_HOUSEKEEPING_METHODS = {
  planRebase,
  planDelete,
  planPrune,
} as const satisfies ContractFamily;
