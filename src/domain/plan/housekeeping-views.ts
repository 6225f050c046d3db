/**
 * What the plan housekeeping operations answer: rebase onto a moved base, delete, prune. The
 * method table's result schemas are these.
 */
import { z } from 'zod';
import { PHASE_STATES, Plan } from './plan.ts';
import { DiffStats, PlanStatus } from './plan-views.ts';

/** One sandbox's rebase: from which base onto which head of its target branch, and how it went. */
export const SandboxRebase = z.object({
  resource: z.string(),
  root: z.string(),
  targetBranch: z.string().optional(),
  /** The base commit before the rebase. */
  from: z.string(),
  /** The base commit now (the target branch's head it was rebased onto). */
  onto: z.string(),
  /** `resolved`: a `--continue` found no conflict markers left and checkpointed the resolution. */
  outcome: z.enum(['rebased', 'up-to-date', 'resolved']),
  /** What the plan changes on the new base (`resolved`: the files that had conflicts). */
  files: z.array(z.string()),
});
export type SandboxRebase = z.infer<typeof SandboxRebase>;

/** A rebase that left the plan appliable (a conflicted one is a PlanError, kind `conflict`). */
export const PlanRebase = z.object({
  planId: z.string(),
  outcome: z.enum(['rebased', 'up-to-date', 'resolved']),
  sandboxes: z.array(SandboxRebase),
  /** The checkpoint `after-rebase`, when anything changed. */
  checkpointId: z.string().optional(),
  plan: PlanStatus,
});
export type PlanRebase = z.infer<typeof PlanRebase>;

/** A sandbox removed with its plan: the directory, and for a worktree its branch. */
export const RemovedSandbox = z.object({ resource: z.string(), root: z.string(), branch: z.string().optional() });
export type RemovedSandbox = z.infer<typeof RemovedSandbox>;

export const PlanDeletion = z.object({
  planId: z.string(),
  deleted: z.literal(true),
  sandboxes: z.array(RemovedSandbox),
  /** With `force`: the changes that were never applied and went with the plan. */
  discarded: DiffStats.optional(),
});
export type PlanDeletion = z.infer<typeof PlanDeletion>;

export const PrunedPlan = z.object({
  planId: z.string(),
  name: z.string(),
  phase: Plan.shape.phase,
  state: Plan.shape.state,
  updatedAt: z.string(),
  sandboxes: z.array(RemovedSandbox),
  discarded: DiffStats.optional(),
});
export type PrunedPlan = z.infer<typeof PrunedPlan>;

export const KeptPlan = PrunedPlan.omit({ sandboxes: true, discarded: true }).extend({
  /** Why it matched but was kept (unapplied changes without `force`, running). */
  reason: z.string(),
});
export type KeptPlan = z.infer<typeof KeptPlan>;

export const PlanPrune = z.object({
  /** true: nothing was removed; `removed` is what would be. */
  dryRun: z.boolean(),
  olderThanSeconds: z.number().int().nonnegative(),
  states: z.array(z.enum(PHASE_STATES)),
  removed: z.array(PrunedPlan),
  kept: z.array(KeptPlan),
});
export type PlanPrune = z.infer<typeof PlanPrune>;
