/**
 * Plans (DESIGN.md §4.3): an action applied to projects, in three phases — strategize (read-only,
 * builds a decision tree), execute (tools change files in a sandbox, with checkpoints), apply
 * (the changes land in the project). Every state change is checked here.
 */
import { z } from 'zod';
import { AppError } from '../errors.js';

export const PHASES = ['strategize', 'execute', 'apply'] as const;
export type Phase = (typeof PHASES)[number];
export const PHASE_STATES = ['queued', 'processing', 'complete', 'errored', 'constrained', 'cancelled', 'applied'] as const;
export type PhaseState = (typeof PHASE_STATES)[number];
export const AUTOMATION_PROFILES = ['manual', 'trusted', 'auto'] as const;
export type AutomationProfile = (typeof AUTOMATION_PROFILES)[number];

export const PlanError = z.object({
  kind: z.enum(['budget', 'tool', 'conflict', 'dirty', 'interrupted', 'strategy', 'internal']),
  message: z.string(),
  recoverable: z.boolean(),
  hint: z.string().optional(),
  files: z.array(z.string()).optional(),
});
export type PlanError = z.infer<typeof PlanError>;

export const SandboxRef = z.object({
  resource: z.string(),
  kind: z.enum(['git-worktree', 'copy']),
  root: z.string(),
  source: z.string(),
  branch: z.string().optional(),
  baseCommit: z.string(),
  targetBranch: z.string().optional(),
});

export const Waiting = z.object({
  kind: z.enum(['tool-approval', 'apply-approval']),
  taskId: z.string(),
  decisionId: z.string().optional(),
  request: z.record(z.string(), z.unknown()),
});
export type Waiting = z.infer<typeof Waiting>;

export const Plan = z.object({
  id: z.string(),
  name: z.string(),
  action: z.string(),
  projects: z.array(z.string()),
  arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  description: z.string(),
  definitionOfDone: z.string(),
  automationProfile: z.enum(AUTOMATION_PROFILES),
  phase: z.enum(PHASES),
  state: z.enum(PHASE_STATES),
  attempt: z.number().int().positive(),
  contextId: z.string(),
  tasks: z.object({ strategize: z.string().optional(), execute: z.string().optional(), apply: z.string().optional() }),
  owner: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  budget: z.object({ maxToolCalls: z.number().int().positive(), maxWallMs: z.number().int().positive() }),
  usage: z.object({ toolCalls: z.number().int().nonnegative(), wallMs: z.number().int().nonnegative(), tokens: z.number().int().nonnegative(), costUsd: z.number().nonnegative() }),
  /** Index of the next step to execute. */
  cursor: z.number().int().nonnegative(),
  stepsTotal: z.number().int().nonnegative(),
  sandboxes: z.array(SandboxRef),
  error: PlanError.optional(),
  waiting: Waiting.optional(),
  applied: z.object({ at: z.string(), commits: z.array(z.object({ resource: z.string(), commit: z.string().optional(), files: z.array(z.string()) })) }).optional(),
});
export type Plan = z.infer<typeof Plan>;

export const Decision = z.object({
  id: z.string(),
  planId: z.string(),
  parentId: z.string().optional(),
  type: z.enum(['strategy', 'step', 'guidance', 'approval']),
  question: z.string(),
  chosen: z.unknown(),
  alternatives: z.array(z.unknown()),
  confidence: z.number().min(0).max(1),
  rationale: z.string(),
  context: z.record(z.string(), z.unknown()),
  stepIndex: z.number().int().nonnegative().optional(),
  superseded: z.boolean(),
  attempt: z.number().int().positive(),
  createdAt: z.string(),
});
export type Decision = z.infer<typeof Decision>;

export const Checkpoint = z.object({
  id: z.string(),
  planId: z.string(),
  label: z.string(),
  /** Commit per resource. */
  commits: z.record(z.string(), z.string()),
  /** Steps done when it was taken: rolling back here resumes at this step. */
  stepIndex: z.number().int().nonnegative(),
  decisionId: z.string().optional(),
  createdAt: z.string(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

export const ToolCallRecord = z.object({
  id: z.string(),
  planId: z.string(),
  decisionId: z.string(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  ok: z.boolean(),
  summary: z.string(),
  durationMs: z.number().int().nonnegative(),
  filesTouched: z.array(z.string()),
  exitCode: z.number().int().nullable().optional(),
  checkpointId: z.string().optional(),
  resource: z.string(),
  createdAt: z.string(),
});
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;

/** What may be asked of a plan, and in which phases/states. */
export type PlanOperation = 'execute' | 'apply' | 'correct' | 'rollback' | 'prompt' | 'cancel';

const ALLOWED: Record<PlanOperation, (p: Plan) => boolean> = {
  execute: (p) =>
    (p.phase === 'strategize' && p.state === 'complete') ||
    (p.phase === 'execute' && ['queued', 'errored', 'constrained', 'processing'].includes(p.state)),
  apply: (p) => (p.phase === 'execute' && p.state === 'complete') || (p.phase === 'apply' && ['errored', 'queued', 'processing'].includes(p.state)),
  correct: (p) => p.state !== 'applied' && p.state !== 'cancelled' && !(p.phase === 'apply' && p.state === 'processing'),
  rollback: (p) => p.state !== 'applied' && p.state !== 'cancelled' && p.sandboxes.length > 0,
  prompt: (p) => p.state === 'errored' || p.state === 'constrained' || p.waiting !== undefined,
  cancel: (p) => p.state !== 'applied' && p.state !== 'cancelled',
};

const WHAT: Record<PlanOperation, string> = {
  execute: 'execute needs a completed strategize, or an execute that errored, hit a constraint or was interrupted',
  apply: 'apply needs a completed execute (or an apply that errored)',
  correct: 'correct works until the plan is applied or cancelled',
  rollback: 'rollback needs a sandbox and a plan not yet applied or cancelled',
  prompt: 'prompt needs a plan that errored or waits for input',
  cancel: 'cancel works until the plan is applied or cancelled',
};

/** Refuses an operation the plan's phase and state do not allow, naming both and what is allowed. */
export function assertAllowed(p: Plan, op: PlanOperation): void {
  if (ALLOWED[op](p)) return;
  const now = (Object.keys(ALLOWED) as PlanOperation[]).filter((o) => ALLOWED[o](p));
  throw new AppError('INVALID_STATE', `Plan ${p.id} is ${p.phase}/${p.state}: ${WHAT[op]}`, {
    details: { planId: p.id, phase: p.phase, state: p.state, operation: op, allowed: now },
    hint: now.length ? `allowed now: ${now.join(', ')}` : 'nothing more can be done with this plan',
  });
}

export function isAllowed(p: Plan, op: PlanOperation): boolean {
  return ALLOWED[op](p);
}

/**
 * Renders `{{name}}` placeholders. A value that is exactly one placeholder keeps the argument's
 * type; inside a longer string it is interpolated.
 */
export function renderTemplate(value: unknown, args: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}$/.exec(value);
    if (whole) return args[whole[1] ?? ''] ?? '';
    return value.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, k: string) => String(args[k] ?? ''));
  }
  if (Array.isArray(value)) return value.map((v) => renderTemplate(v, args));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, args)]));
  return value;
}
