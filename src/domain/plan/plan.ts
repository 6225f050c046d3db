/**
 * Plans (DESIGN.md §4.3): an action applied to projects, in three phases — strategize (read-only,
 * builds a decision tree), execute (tools change files in a sandbox, with checkpoints), apply
 * (the changes land in the project). A plan's phase and state change only through the state machine
 * below, which checks each move against one transition table and refuses an illegal one; the rest
 * of a plan (cursor, attempt, budget, usage, sandboxes) is kept by the application's plan engine.
 */
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { DeepReadonly } from '../readonly.ts';
import { BUILTIN_AUTOMATION_PROFILES } from '../registry/builtins.ts';
import { profileEntityName } from '../registry/project.definition.ts';
import { CommandOutput } from './command-output.ts';
import { ApprovalRequest } from './approval-request.ts';
import { PolicySnapshot, PolicyVerdict } from './policy.ts';

export const PHASES = ['strategize', 'execute', 'apply'] as const;
export type Phase = (typeof PHASES)[number];
export const PHASE_STATES = [
  'queued',
  'processing',
  'complete',
  'errored',
  'constrained',
  'cancelled',
  'applied',
] as const;
export type PhaseState = (typeof PHASE_STATES)[number];
/** Whether a plan's commands may reach the network. */
export const NetworkAccess = z.enum(['none', 'allow']);
export type NetworkAccess = z.infer<typeof NetworkAccess>;

/**
 * A plan's network: allowed when the action or one of its projects says `allow`, unless a project
 * says `none` explicitly (a project's setting beats the action's); by default none.
 */
export function planNetwork(projects: ReadonlyArray<NetworkAccess | undefined>, action?: NetworkAccess): NetworkAccess {
  if (projects.includes('none')) return 'none';
  return projects.includes('allow') || action === 'allow' ? 'allow' : 'none';
}

/** How commands ran: OS-confined, or unconfined because the user set `confinement: none`. */
export const Confinement = z.enum(['confined', 'none']);
export type Confinement = z.infer<typeof Confinement>;

export const PlanError = z.object({
  kind: z.enum(['budget', 'tool', 'policy', 'conflict', 'dirty', 'interrupted', 'strategy', 'actor', 'internal']),
  message: z.string(),
  recoverable: z.boolean(),
  hint: z.string().optional(),
  files: z.array(z.string()).optional(),
  /**
   * Who cancelled the plan (a user's name), when one did on a server: another terminal or another
   * member may have, and every front end that shows the plan says who.
   */
  cancelledBy: z.string().optional(),
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
  /** A git-remote's sandbox: `source` is the server's clone; apply pushes to the remote. */
  remote: z.literal(true).optional(),
});

export const Waiting = z.object({
  kind: z.enum(['tool-approval', 'apply-approval']),
  taskId: z.string(),
  decisionId: z.string().optional(),
  /** What its task asked: the same request as the task's input-required status carries. */
  request: ApprovalRequest,
});
export type Waiting = z.infer<typeof Waiting>;

/** The LLM actors of a plan from a goal, and where each choice came from (flag, action, project). */
export const PlanActors = z.object({
  strategy: z.string(),
  execution: z.string(),
  source: z.object({ strategy: z.string(), execution: z.string() }),
});
export type PlanActors = z.infer<typeof PlanActors>;

export const PlanInvariant = z.object({
  text: z.string(),
  source: z.enum(['action', 'project', 'global']),
  /** The action or project that declares it (absent: the global set). */
  from: z.string().optional(),
});
export type PlanInvariant = z.infer<typeof PlanInvariant>;

/** Whether the plan met its definition of done, decided at the end of execute. */
export const PlanDone = z.object({
  met: z.boolean(),
  /** `verify`: the verify command's exit status decided; `assessment`: the execution actor's own. */
  by: z.enum(['verify', 'assessment', 'steps']),
  verify: z
    .object({ command: z.string(), exitCode: z.number().int().nullable(), ok: z.boolean(), summary: z.string() })
    .optional(),
  /** The execution actor's assessment, in its words. */
  assessment: z.string().optional(),
  decisionId: z.string().optional(),
  at: z.string(),
});
export type PlanDone = z.infer<typeof PlanDone>;

export const Plan = z.object({
  id: z.string(),
  name: z.string(),
  action: z.string(),
  projects: z.array(z.string()),
  arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  description: z.string(),
  definitionOfDone: z.string(),
  /** The automation profile entity the plan was made with (plans made before profiles were entities: `manual` …). */
  automationProfile: z.string(),
  /** The profile's rules as they were at `use`: editing the profile later does not change the plan. */
  policy: PolicySnapshot.optional(),
  phase: z.enum(PHASES),
  state: z.enum(PHASE_STATES),
  attempt: z.number().int().positive(),
  contextId: z.string(),
  tasks: z.object({ strategize: z.string().optional(), execute: z.string().optional(), apply: z.string().optional() }),
  owner: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  budget: z.object({
    maxToolCalls: z.number().int().positive(),
    maxWallMs: z.number().int().positive(),
    /** Tokens (input + output) the plan's actors may use (absent: no limit). */
    maxTokens: z.number().int().positive().optional(),
    /** Cost in the actors' price currency (absent: no limit; needs the actors' `prices`). */
    maxCost: z.number().positive().optional(),
  }),
  usage: z.object({
    toolCalls: z.number().int().nonnegative(),
    wallMs: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(),
    costUsd: z.number().nonnegative(),
  }),
  /** Index of the next step to execute. */
  cursor: z.number().int().nonnegative(),
  stepsTotal: z.number().int().nonnegative(),
  sandboxes: z.array(SandboxRef),
  /** Decided at `use` from the project and action settings (absent on older plans: none). */
  network: NetworkAccess.optional(),
  /** How its commands run; `none` once any execute ran unconfined (it stays). */
  confinement: Confinement.optional(),
  /** Absent: the action's declared steps are followed (the built-in deterministic actor). */
  actors: PlanActors.optional(),
  /** The action's, the project's and the global invariants, frozen at `use`. */
  invariants: z.array(PlanInvariant).optional(),
  /** The verify command (the project's, else the action's), frozen at `use`. */
  verify: z.object({ command: z.string(), timeoutSeconds: z.number().int().optional(), source: z.string() }).optional(),
  done: PlanDone.optional(),
  error: PlanError.optional(),
  waiting: Waiting.optional(),
  applied: z
    .object({
      at: z.string(),
      commits: z.array(z.object({ resource: z.string(), commit: z.string().optional(), files: z.array(z.string()) })),
    })
    .optional(),
});
/** A plan as the schema parses it: only the domain's functions write one (see writable). */
export type PlanRecord = z.infer<typeof Plan>;
/** A plan, deeply read-only: every change goes through the state machine (plan-state.ts) or plan-progress.ts. */
export type Plan = DeepReadonly<PlanRecord>;

/** What a step decides: the tool call it makes. */
export const ToolChoice = z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()) });
export type ToolChoice = z.infer<typeof ToolChoice>;

export const Decision = z.object({
  id: z.string(),
  planId: z.string(),
  parentId: z.string().optional(),
  /**
   * strategy: the root (how to reach the goal); step: a declared step's tool call; choice: a decision an
   * LLM strategy actor made; guidance: the user's; approval: an answer; assessment: whether the work met
   * the definition of done.
   */
  type: z.enum(['strategy', 'step', 'choice', 'guidance', 'approval', 'assessment']),
  question: z.string(),
  /** A step's tool call; for the other types, the choice in words (an answer, a guidance). */
  chosen: z.union([z.string(), ToolChoice]),
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
  network: NetworkAccess.optional(),
  /** For commands: how this one ran. */
  confinement: Confinement.optional(),
  /**
   * For commands: their whole output (up to a MiB). Stored apart from the record: the lists of a
   * plan's calls leave it out, `plan explain` and the status's last command carry it.
   */
  output: CommandOutput.optional(),
  createdAt: z.string(),
  /** Which rule of the plan's profile decided the call (or that its default did). */
  policy: PolicyVerdict.optional(),
});
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;

/**
 * The policy a plan runs under: its snapshot, or — for a plan stored before profiles were
 * entities, which names a built-in by its short name — that built-in's rules.
 */
export function policyOf(p: Pick<Plan, 'automationProfile' | 'policy' | 'createdAt'>): DeepReadonly<PolicySnapshot> {
  if (p.policy) return p.policy;
  const name = profileEntityName(p.automationProfile);
  const builtin = BUILTIN_AUTOMATION_PROFILES.find((b) => b.name === name);
  if (!builtin)
    throw new AppError(
      'INTERNAL',
      `plan names automation profile ${p.automationProfile} but keeps no copy of its rules`,
    );
  return {
    profile: builtin.name,
    revision: 1,
    contentHash: '',
    default: builtin.default,
    applyApproval: builtin.applyApproval ?? true,
    rules: builtin.rules ?? [],
    takenAt: p.createdAt,
  };
}

/** A deep copy of the plan, free to change: for a view or a report built from it, never for the plan itself. */
export function copyPlan(p: Plan): PlanRecord {
  return structuredClone(p) as PlanRecord;
}

/**
 * Renders `{{name}}` placeholders. A value that is exactly one placeholder keeps the argument's
 * type; inside a longer string it is interpolated.
 */
export function renderTemplate(value: unknown, args: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}$/.exec(value);
    if (whole) return args[whole[1] ?? ''] ?? '';
    return value.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, k: string) => {
      const v = args[k] ?? '';
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => renderTemplate(v, args));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, args)]));
  return value;
}

/**
 * The first budget the plan has spent (tool calls, wall time, tokens, cost), as the error that
 * stops it `constrained`; undefined while every budget has room. `flag` names the option that
 * raises it.
 */
export function budgetExceeded(p: Pick<Plan, 'budget' | 'usage' | 'id'>): PlanError | undefined {
  const { budget: b, usage: u } = p;
  const over = (what: string, flag: string): PlanError => ({
    kind: 'budget',
    message: `budget exceeded: ${what}`,
    recoverable: true,
    hint: `raise it with agents plan execute ${p.id} ${flag}; everything done so far is kept`,
  });
  if (u.toolCalls >= b.maxToolCalls)
    return over(`${u.toolCalls} of ${b.maxToolCalls} tool calls used`, '--max-tool-calls N');
  if (u.wallMs >= b.maxWallMs)
    return over(
      `${Math.round(u.wallMs / 1000)} s of ${Math.round(b.maxWallMs / 1000)} s wall time used`,
      '--max-wall-seconds N',
    );
  if (b.maxTokens !== undefined && u.tokens >= b.maxTokens)
    return over(`${u.tokens} of ${b.maxTokens} tokens used`, '--max-tokens N');
  if (b.maxCost !== undefined && u.costUsd >= b.maxCost)
    return over(`${u.costUsd.toFixed(4)} of ${b.maxCost} cost used`, '--max-cost N');
  return undefined;
}
