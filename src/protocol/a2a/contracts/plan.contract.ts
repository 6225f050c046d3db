import { z } from 'zod';
import { PHASE_STATES, PHASES } from '../../../domain/plan/plan.ts';
import { ProfileRef } from '../../../domain/registry/project.definition.ts';
import {
  Correction,
  DecisionExplanation,
  PlanArtifacts,
  PlanDiff,
  PlanRun,
  PlanStatus,
  PlanTree,
} from '../../../domain/plan/plan-views.ts';
import { EntityName } from '../../../domain/registry/names.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

const Ulid = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an id as printed by agents plan (26 characters)');
/** A plan's id, a unique prefix of it (4 or more characters; the plan service says when shorter), or `last`. */
const PlanId = z
  .string()
  .regex(
    /^(last|[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{1,26})$/,
    'must be a plan id as printed by agents plan, a unique prefix of one (4 or more characters), or last',
  );

const Budget = {
  maxToolCalls: z.number().int().min(1).max(100_000).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000_000).optional(),
  maxCost: z.number().positive().max(1_000_000).optional(),
  maxWallSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .optional(),
};

// Every plan method came with extension version 1.1 (`since`).
export const planUse = defineContract({
  name: '_cleveragents/plan/use',
  surface: 'extension',
  since: '1.1',
  summary:
    'Create a plan from an action (or a goal: builtin/goal) and projects (arguments checked against the action) and strategize it.',
  permission: 'plan:write',
  params: z
    .object({
      action: EntityName.optional(),
      goal: z.string().trim().min(1, 'must not be empty').max(8000).optional(),
      actor: EntityName.optional(),
      strategyActor: EntityName.optional(),
      executionActor: EntityName.optional(),
      projects: z.array(EntityName).min(1, 'name at least one project'),
      arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
      automationProfile: ProfileRef.optional(),
      wait: z.boolean().optional(),
      ...Budget,
    })
    .strict(),
  result: PlanRun,
});

export const planExecute = defineContract({
  name: '_cleveragents/plan/execute',
  surface: 'extension',
  since: '1.1',
  summary: 'Run (or resume from the last checkpoint) the execute phase in the sandbox; returns its task.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, wait: z.boolean().optional(), yes: z.boolean().optional(), ...Budget }).strict(),
  result: PlanRun,
});

export const planApply = defineContract({
  name: '_cleveragents/plan/apply',
  surface: 'extension',
  since: '1.1',
  summary: 'Merge the sandbox into the project; a conflict or dirty file stops with a plan error and changes nothing.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, yes: z.boolean().optional(), wait: z.boolean().optional() }).strict(),
  result: PlanRun,
});

export const planCancel = defineContract({
  name: '_cleveragents/plan/cancel',
  surface: 'extension',
  since: '1.1',
  summary:
    'Stop a plan promptly (a running command is killed); the sandbox stays for inspection, unless clean (1.2) removes it and its branch.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, reason: z.string().max(2000).optional(), clean: z.boolean().optional() }).strict(),
  result: PlanStatus,
});

export const planStatus = defineContract({
  name: '_cleveragents/plan/status',
  surface: 'extension',
  since: '1.1',
  summary: 'Phase, state, progress, timing, counts, usage, error (with a hint) and what is allowed next.',
  permission: 'plan:read',
  params: z.object({ planId: PlanId }).strict(),
  result: PlanStatus,
});

export const planTree = defineContract({
  name: '_cleveragents/plan/tree',
  surface: 'extension',
  since: '1.1',
  summary: 'The decision tree (superseded decisions only with showSuperseded).',
  permission: 'plan:read',
  params: z.object({ planId: PlanId, showSuperseded: z.boolean().optional() }).strict(),
  result: PlanTree,
});

export const planExplain = defineContract({
  name: '_cleveragents/plan/explain',
  surface: 'extension',
  since: '1.1',
  summary: 'One decision: what was decided and why, its context, tool calls and checkpoint.',
  permission: 'plan:read',
  params: z.object({ decisionId: Ulid, planId: PlanId.optional() }).strict(),
  result: DecisionExplanation,
});

export const planCorrect = defineContract({
  name: '_cleveragents/plan/correct',
  surface: 'extension',
  since: '1.1',
  summary: 'Correct a decision: revert (supersede it and what follows, roll back, re-strategize) or append guidance.',
  permission: 'plan:write',
  params: z
    .object({
      decisionId: Ulid,
      planId: PlanId.optional(),
      mode: z.enum(['revert', 'append']),
      guidance: z.string().min(1, 'is required').max(10_000),
      dryRun: z.boolean().optional(),
    })
    .strict(),
  result: Correction,
});

export const planDiff = defineContract({
  name: '_cleveragents/plan/diff',
  surface: 'extension',
  since: '1.1',
  summary: "The plan's changes as a unified diff with per-file stats, and file by file (paths, status, hunks).",
  permission: 'plan:read',
  params: z.object({ planId: PlanId }).strict(),
  result: PlanDiff,
});

export const planArtifacts = defineContract({
  name: '_cleveragents/plan/artifacts',
  surface: 'extension',
  since: '1.1',
  summary: 'Per changed file: written, edited or deleted, size, lines added and removed.',
  permission: 'plan:read',
  params: z.object({ planId: PlanId }).strict(),
  result: PlanArtifacts,
});

export const planPrompt = defineContract({
  name: '_cleveragents/plan/prompt',
  surface: 'extension',
  since: '1.1',
  summary:
    'Give guidance to a plan that errored, and resume it; on a waiting approval, a clear yes approves and any other text rejects with that guidance.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, guidance: z.string().min(1, 'is required').max(10_000) }).strict(),
  result: PlanRun,
});

export const planApprove = defineContract({
  name: '_cleveragents/plan/approve',
  surface: 'extension',
  since: '1.1',
  summary:
    'Approve what the plan waits for (a tool call, or the apply) and continue its run on the same task; `always` (1.5) also approves the later tool calls of this run with the same command (`command`) or of the same tool (`tool`).',
  permission: 'plan:write',
  params: z
    .object({
      planId: PlanId,
      wait: z.boolean().optional(),
      always: z.enum(['command', 'tool'], { message: 'must be command or tool' }).optional(),
    })
    .strict(),
  result: PlanRun,
});

export const planReject = defineContract({
  name: '_cleveragents/plan/reject',
  surface: 'extension',
  since: '1.1',
  summary:
    'Reject what the plan waits for, optionally with guidance (what to do instead); a rejected write does not happen.',
  permission: 'plan:write',
  params: z
    .object({
      planId: PlanId,
      guidance: z.string().trim().min(1, 'must not be empty').max(10_000).optional(),
      wait: z.boolean().optional(),
    })
    .strict(),
  result: PlanRun,
});

export const planRollback = defineContract({
  name: '_cleveragents/plan/rollback',
  surface: 'extension',
  since: '1.1',
  summary:
    'Restore the sandbox to a checkpoint (named, or `steps` back from where the plan is); execute then resumes from there. Refused after apply.',
  permission: 'plan:write',
  params: z
    .object({
      checkpointId: Ulid.optional(),
      planId: PlanId.optional(),
      steps: z.number().int().min(1).max(10_000).optional(),
    })
    .strict()
    .refine((p) => p.checkpointId !== undefined || p.planId !== undefined, {
      message: 'name a checkpoint (checkpointId) or a plan (planId, with steps or checkpointId)',
      path: ['checkpointId'],
    })
    .refine((p) => p.steps === undefined || (p.planId !== undefined && p.checkpointId === undefined), {
      message: 'steps goes with planId and without checkpointId',
      path: ['steps'],
    }),
  result: PlanStatus,
});

export const planList = defineContract({
  name: '_cleveragents/plan/list',
  surface: 'extension',
  since: '1.1',
  summary: 'Your plans, newest first: filter by phase, state, project, action, name regex.',
  permission: 'plan:read',
  params: z
    .object({
      phase: z.enum(PHASES).optional(),
      state: z.enum(PHASE_STATES).optional(),
      project: EntityName.optional(),
      action: EntityName.optional(),
      nameRegex: z.string().max(200).optional(),
      pageSize: z.number().int().min(1).max(500).optional(),
      pageToken: z.string().max(100).optional(),
    })
    .strict(),
  result: z.object({ plans: z.array(PlanStatus), nextPageToken: z.string(), totalSize: z.number().int() }),
});

/** The plan family: every row of plan.contract.ts, in the table's order. */
export const PLAN_METHODS = {
  planUse,
  planExecute,
  planApply,
  planCancel,
  planStatus,
  planTree,
  planExplain,
  planCorrect,
  planDiff,
  planArtifacts,
  planPrompt,
  planApprove,
  planReject,
  planRollback,
  planList,
} as const satisfies ContractFamily;
