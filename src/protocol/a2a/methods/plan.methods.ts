import { z } from 'zod';
import { AUTOMATION_PROFILES, PHASE_STATES, PHASES } from '../../../domain/plan/plan.js';
import { Correction, DecisionExplanation, PlanArtifacts, PlanDiff, PlanRun, PlanStatus, PlanTree } from '../../../domain/plan/plan-views.js';
import { EntityName } from '../../../domain/registry/names.js';
import { defineMethod } from '../method.js';

const Ulid = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an id as printed by agents plan (26 characters)');
const PlanId = Ulid;

/** The plan status every plan row answers with (the schema lives with the domain's views). */
export const PlanStatusSchema = PlanStatus;

const Budget = {
  maxToolCalls: z.number().int().min(1).max(100_000).optional(),
  maxWallSeconds: z.number().int().min(1).max(7 * 24 * 3600).optional(),
};

export const planUse = defineMethod({
  name: '_cleveragents/plan/use',
  surface: 'extension',
  summary: 'Create a plan from an action and projects (arguments checked against the action) and strategize it.',
  permission: 'plan:write',
  params: z
    .object({
      action: EntityName,
      projects: z.array(EntityName).min(1, 'name at least one project'),
      arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
      automationProfile: z.enum(AUTOMATION_PROFILES).optional(),
      wait: z.boolean().optional(),
      ...Budget,
    })
    .strict(),
  result: PlanRun,
  call: (f, p, ctx) => f.plans.use(p, ctx.principal),
});

export const planExecute = defineMethod({
  name: '_cleveragents/plan/execute',
  surface: 'extension',
  summary: 'Run (or resume from the last checkpoint) the execute phase in the sandbox; returns its task.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, wait: z.boolean().optional(), yes: z.boolean().optional(), ...Budget }).strict(),
  result: PlanRun,
  call: (f, p, ctx) => f.plans.execute(p.planId, p, ctx.principal),
});

export const planApply = defineMethod({
  name: '_cleveragents/plan/apply',
  surface: 'extension',
  summary: "Merge the sandbox into the project; a conflict or dirty file stops with a plan error and changes nothing.",
  permission: 'plan:write',
  params: z.object({ planId: PlanId, yes: z.boolean().optional(), wait: z.boolean().optional() }).strict(),
  result: PlanRun,
  call: (f, p, ctx) => f.plans.apply(p.planId, p, ctx.principal),
});

export const planCancel = defineMethod({
  name: '_cleveragents/plan/cancel',
  surface: 'extension',
  summary: 'Stop a plan promptly (a running command is killed); the sandbox stays for inspection.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, reason: z.string().max(2000).optional() }).strict(),
  result: PlanStatus,
  call: (f, p, ctx) => f.plans.cancel(p.planId, p.reason, ctx.principal),
});

export const planStatus = defineMethod({
  name: '_cleveragents/plan/status',
  surface: 'extension',
  summary: 'Phase, state, progress, timing, counts, usage, error (with a hint) and what is allowed next.',
  permission: 'plan:read',
  params: z.object({ planId: PlanId }).strict(),
  result: PlanStatus,
  call: (f, p, ctx) => f.plans.status(p.planId, ctx.principal),
});

export const planTree = defineMethod({
  name: '_cleveragents/plan/tree',
  surface: 'extension',
  summary: 'The decision tree (superseded decisions only with showSuperseded).',
  permission: 'plan:read',
  params: z.object({ planId: PlanId, showSuperseded: z.boolean().optional() }).strict(),
  result: PlanTree,
  call: (f, p, ctx) => f.plans.tree(p.planId, p.showSuperseded ?? false, ctx.principal),
});

export const planExplain = defineMethod({
  name: '_cleveragents/plan/explain',
  surface: 'extension',
  summary: 'One decision: what was decided and why, its context, tool calls and checkpoint.',
  permission: 'plan:read',
  params: z.object({ decisionId: Ulid, planId: PlanId.optional() }).strict(),
  result: DecisionExplanation,
  call: (f, p, ctx) => f.plans.explain(p.decisionId, ctx.principal, p.planId),
});

export const planCorrect = defineMethod({
  name: '_cleveragents/plan/correct',
  surface: 'extension',
  summary: 'Correct a decision: revert (supersede it and what follows, roll back, re-strategize) or append guidance.',
  permission: 'plan:write',
  params: z
    .object({ decisionId: Ulid, planId: PlanId.optional(), mode: z.enum(['revert', 'append']), guidance: z.string().min(1, 'is required').max(10_000), dryRun: z.boolean().optional() })
    .strict(),
  result: Correction,
  call: (f, p, ctx) => f.plans.correct(p, ctx.principal, p.planId),
});

export const planDiff = defineMethod({
  name: '_cleveragents/plan/diff',
  surface: 'extension',
  summary: "The plan's changes as a unified diff with per-file stats.",
  permission: 'plan:read',
  params: z.object({ planId: PlanId }).strict(),
  result: PlanDiff,
  call: (f, p, ctx) => f.plans.diff(p.planId, ctx.principal),
});

export const planArtifacts = defineMethod({
  name: '_cleveragents/plan/artifacts',
  surface: 'extension',
  summary: 'Per changed file: written, edited or deleted, size, lines added and removed.',
  permission: 'plan:read',
  params: z.object({ planId: PlanId }).strict(),
  result: PlanArtifacts,
  call: (f, p, ctx) => f.plans.artifacts(p.planId, ctx.principal),
});

export const planPrompt = defineMethod({
  name: '_cleveragents/plan/prompt',
  surface: 'extension',
  summary: 'Give guidance to a plan that errored, and resume it; on a waiting approval, a clear yes approves and any other text rejects with that guidance.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, guidance: z.string().min(1, 'is required').max(10_000) }).strict(),
  result: PlanRun,
  call: (f, p, ctx) => f.plans.prompt(p.planId, p.guidance, ctx.principal),
});

export const planApprove = defineMethod({
  name: '_cleveragents/plan/approve',
  surface: 'extension',
  summary: 'Approve what the plan waits for (a tool call, or the apply) and continue its run on the same task.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, wait: z.boolean().optional() }).strict(),
  result: PlanRun,
  call: (f, p, ctx) => f.plans.approve(p.planId, p, ctx.principal),
});

export const planReject = defineMethod({
  name: '_cleveragents/plan/reject',
  surface: 'extension',
  summary: 'Reject what the plan waits for, optionally with guidance (what to do instead); a rejected write does not happen.',
  permission: 'plan:write',
  params: z.object({ planId: PlanId, guidance: z.string().trim().min(1, 'must not be empty').max(10_000).optional(), wait: z.boolean().optional() }).strict(),
  result: PlanRun,
  call: (f, p, ctx) => f.plans.reject(p.planId, p, ctx.principal),
});

export const planRollback = defineMethod({
  name: '_cleveragents/plan/rollback',
  surface: 'extension',
  summary: 'Restore the sandbox to a checkpoint; execute then resumes from there. Refused after apply.',
  permission: 'plan:write',
  params: z.object({ checkpointId: Ulid, planId: PlanId.optional() }).strict(),
  result: PlanStatus,
  call: (f, p, ctx) => f.plans.rollback(p.checkpointId, ctx.principal, p.planId),
});

export const planList = defineMethod({
  name: '_cleveragents/plan/list',
  surface: 'extension',
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
  call: (f, p, ctx) => f.plans.list(p, ctx.principal),
});

export const PLAN_METHODS = [planUse, planExecute, planApply, planCancel, planStatus, planTree, planExplain, planCorrect, planDiff, planArtifacts, planPrompt, planApprove, planReject, planRollback, planList] as const;
