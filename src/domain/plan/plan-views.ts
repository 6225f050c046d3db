/**
 * What the plan operations answer (the read views of a plan). The method table's result schemas
 * are these, and the application and every client take their types from them.
 */
import { z } from 'zod';
import { Task } from '../a2a.model.ts';
import { Checkpoint, Decision, Plan, PlanError, SandboxRef, ToolCallRecord, Waiting } from './plan.ts';
import { PLAN_OPERATIONS } from './plan-state.ts';
import { PolicySnapshot } from './policy.ts';
import { CommandOutput } from './command-output.ts';

export const DiffStats = z.object({
  files: z.number().int(),
  additions: z.number().int(),
  deletions: z.number().int(),
});
export type DiffStats = z.infer<typeof DiffStats>;

export const FileChange = z.object({
  path: z.string(),
  status: z.enum(['added', 'modified', 'deleted', 'renamed']),
  additions: z.number().int(),
  deletions: z.number().int(),
  size: z.number().int(),
  binary: z.boolean(),
});
export type FileChange = z.infer<typeof FileChange>;

/** A command a plan ran, with its output: what `plan status` shows of the last one. */
export const CommandRun = z.object({
  toolCallId: z.string(),
  decisionId: z.string(),
  /** The step (1-based) the decision made it for, when it has one. */
  step: z.number().int().positive().optional(),
  tool: z.string(),
  ok: z.boolean(),
  summary: z.string(),
  exitCode: z.number().int().nullable().optional(),
  createdAt: z.string(),
  output: CommandOutput,
});
export type CommandRun = z.infer<typeof CommandRun>;

export const PlanStatus = z.object({
  planId: z.string(),
  name: z.string(),
  action: z.string(),
  projects: z.array(z.string()),
  arguments: Plan.shape.arguments,
  description: z.string(),
  definitionOfDone: z.string(),
  automationProfile: Plan.shape.automationProfile,
  /** The profile's rules as copied at `use` (what decides the plan's calls, whatever the profile says now). */
  policy: PolicySnapshot,
  phase: Plan.shape.phase,
  state: Plan.shape.state,
  running: z.boolean(),
  attempt: z.number().int(),
  progress: z.object({ stepsDone: z.number().int(), stepsTotal: z.number().int() }),
  timing: z.object({ createdAt: z.string(), updatedAt: z.string(), elapsedMs: z.number() }),
  counts: z.object({
    decisions: z.number().int(),
    activeDecisions: z.number().int(),
    toolCalls: z.number().int(),
    checkpoints: z.number().int(),
  }),
  usage: Plan.shape.usage,
  budget: z.object({
    maxToolCalls: z.number().int(),
    maxWallSeconds: z.number().int(),
    maxTokens: z.number().int().optional(),
    maxCost: z.number().optional(),
  }),
  actors: Plan.shape.actors,
  invariants: Plan.shape.invariants,
  verify: Plan.shape.verify,
  done: Plan.shape.done,
  error: PlanError.optional(),
  waiting: Waiting.optional(),
  tasks: Plan.shape.tasks,
  contextId: z.string(),
  sandboxes: z.array(SandboxRef),
  network: Plan.shape.network,
  confinement: Plan.shape.confinement,
  checkpoints: z.array(Checkpoint.pick({ id: true, label: true, stepIndex: true, createdAt: true })),
  applied: Plan.shape.applied,
  allowed: z.array(z.enum(PLAN_OPERATIONS)),
  /**
   * The newest command the plan ran (the failing step's, when a command failed), with its whole
   * output. Not in `plan list` (an output can be a MiB).
   */
  lastCommand: CommandRun.optional(),
});
export type PlanStatus = z.infer<typeof PlanStatus>;

/** A phase started (or answered): the plan's status and the task the phase runs on. */
export const PlanRun = z.object({ plan: PlanStatus, taskId: z.string(), task: Task.optional() });
export type PlanRun = z.infer<typeof PlanRun>;

export const DecisionNode = Decision.extend({
  get children(): z.ZodArray<typeof DecisionNode> {
    return z.array(DecisionNode);
  },
});
export type DecisionNode = z.infer<typeof DecisionNode>;

export const PlanTree = z.object({ planId: z.string(), attempt: z.number().int(), decisions: z.array(DecisionNode) });
export type PlanTree = z.infer<typeof PlanTree>;

export const DecisionExplanation = z.object({
  planId: z.string(),
  decision: Decision,
  parent: Decision.optional(),
  children: z.array(Decision),
  toolCalls: z.array(ToolCallRecord),
  checkpointAfter: Checkpoint.optional(),
});
export type DecisionExplanation = z.infer<typeof DecisionExplanation>;

const CorrectMode = z.enum(['revert', 'append']);
/** `correct --dry-run`: what a correction would do, with nothing changed. */
export const CorrectionPreview = z.object({
  planId: z.string(),
  mode: CorrectMode,
  dryRun: z.literal(true),
  attempt: z.number().int(),
  wouldSupersede: z.array(z.string()),
  wouldAdd: z.string().optional(),
  wouldRestoreCheckpoint: z.string().optional(),
  wouldResumeAtStep: z.number().int().optional(),
  note: z.string().optional(),
});
/** A correction made: the decisions it superseded and added, and where execute resumes. */
export const CorrectionDone = z.object({
  planId: z.string(),
  mode: CorrectMode,
  attempt: z.number().int(),
  superseded: z.array(z.string()),
  added: z.array(z.string()),
  restoredCheckpoint: z.string().optional(),
  resumeAtStep: z.number().int().optional(),
  /** A plan from a goal: the task the strategy actor re-planned on. */
  taskId: z.string().optional(),
  /** What the correction could not do (a stepped action's fixed steps), in words. */
  note: z.string().optional(),
});
export const Correction = z.union([CorrectionPreview, CorrectionDone]);
export type Correction = z.infer<typeof Correction>;

/** One sandbox's share of a plan's changes. */
export const SandboxChanges = z.object({ resource: z.string(), files: z.array(FileChange), stats: DiffStats });
/** What the execute phase stores in its `diff` artifact's data part. */
export const StoredDiff = z.object({ stats: DiffStats, sandboxes: z.array(SandboxChanges) });
export type StoredDiff = z.infer<typeof StoredDiff>;

/** One line of a hunk: ' ' context, '+' added, '-' removed; `noNewline` when it ends its side without one. */
export const DiffLine = z.object({
  kind: z.enum([' ', '+', '-']),
  text: z.string(),
  noNewline: z.literal(true).optional(),
});
/**
 * A hunk. Starts are 1-based; a side with no lines starts where its lines would go (jsdiff's rule,
 * not the unified header's number before them), so applying a hunk never special-cases them.
 */
export const DiffHunk = z.object({
  oldStart: z.number().int(),
  oldLines: z.number().int(),
  newStart: z.number().int(),
  newLines: z.number().int(),
  lines: z.array(DiffLine),
});
/** One changed file of a plan's diff, its paths relative to its resource's root (no `a/`, `b/`). */
export const DiffFile = z.object({
  /** The resource (sandbox) the file belongs to, when known. */
  resource: z.string().optional(),
  /** The path before (`null`: the file is new) and after (`null`: the file was deleted). */
  oldPath: z.string().nullable(),
  newPath: z.string().nullable(),
  status: FileChange.shape.status,
  binary: z.literal(true).optional(),
  hunks: z.array(DiffHunk),
});
export type DiffLine = z.infer<typeof DiffLine>;

/** A unified hunk's raw lines as {@link DiffLine}s; `\ No newline at end of file` marks the line before it. */
export function hunkLines(raw: readonly string[]): DiffLine[] {
  const out: DiffLine[] = [];
  for (const l of raw) {
    const mark = l.charAt(0);
    if (mark === '\\') {
      const last = out.at(-1);
      if (last) last.noNewline = true;
    } else if (mark === ' ' || mark === '+' || mark === '-') out.push({ kind: mark, text: l.slice(1) });
  }
  return out;
}
export type DiffHunk = z.infer<typeof DiffHunk>;
export type DiffFile = z.infer<typeof DiffFile>;

export const PlanDiff = StoredDiff.extend({
  planId: z.string(),
  /** Where the changes were read: the live sandbox, the execute task's artifact, or nowhere yet. */
  source: z.enum(['sandbox', 'applied', 'execute-task', 'none']),
  unified: z.string(),
  /** The same changes, file by file (added later: optional, so that older results still read). */
  files: z.array(DiffFile).optional(),
});
export type PlanDiff = z.infer<typeof PlanDiff>;

export const ArtifactRow = z.object({
  resource: z.string(),
  path: z.string(),
  change: z.enum(['written', 'edited', 'deleted']),
  status: FileChange.shape.status,
  size: z.number().int(),
  additions: z.number().int(),
  deletions: z.number().int(),
  binary: z.boolean(),
  tools: z.array(z.string()),
});
export type ArtifactRow = z.infer<typeof ArtifactRow>;

export const PlanArtifacts = z.object({ planId: z.string(), files: z.array(ArtifactRow) });
export type PlanArtifacts = z.infer<typeof PlanArtifacts>;
