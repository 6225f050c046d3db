import { z } from 'zod';
import { CONTEXT_VIEWS, ContextViewSettings, RANKINGS } from '../../../domain/context/context.ts';
import { EntityName } from '../../../domain/registry/names.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

/** Each method acts in the namespace of the project it names. */
const BY_PROJECT = { param: 'project', form: 'entity' } as const;
const Ulid = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an id as printed by agents plan (26 characters)');
const View = z.enum(CONTEXT_VIEWS, { error: `must be one of ${CONTEXT_VIEWS.join(', ')}` });
const Goal = z.string().min(1, 'is required').max(4000, 'is at most 4000 characters');
const Budget = z
  .number()
  .int('must be a whole number of tokens')
  .min(1, 'must be between 1 and 10,000,000 tokens')
  .max(10_000_000, 'must be between 1 and 10,000,000 tokens');
const Int = z.number().int();
const Ranking = z.enum(RANKINGS);

const EffectiveSettings = z.object({
  include: z.array(z.string()),
  exclude: z.array(z.string()),
  maxFileSize: Int,
  maxTotalSize: Int,
  maxFiles: Int,
  /** Absent: the model's window minus the reserves. */
  tokenBudget: Int.optional(),
  reserves: z.object({ system: Int, history: Int, answer: Int }),
  ranking: z.array(Ranking),
  /** Absent from agents before extension 1.4. */
  instructions: z
    .object({ files: z.array(z.string()), maxFileSize: Int, maxTokens: Int, enabled: z.boolean() })
    .optional(),
});

const Source = z.union([z.literal('builtin'), z.templateLiteral(['view:', View])]);
const Sources = z.object({
  include: Source,
  exclude: Source,
  maxFileSize: Source,
  maxTotalSize: Source,
  maxFiles: Source,
  tokenBudget: Source,
  reserves: Source,
  ranking: Source,
  instructions: Source.optional(),
});

export const ContextShowResult = z.object({
  project: z.string(),
  revision: Int,
  views: z.array(z.object({ view: View, settings: EffectiveSettings, sources: Sources })),
});

const S = ContextViewSettings.shape;
/** The fields `set` writes: each one as in the project's definition, or null to clear it. */
const SetSettings = z
  .object({
    include: S.include.unwrap().nullable().optional(),
    exclude: S.exclude.unwrap().nullable().optional(),
    maxFileSize: S.maxFileSize.unwrap().nullable().optional(),
    maxTotalSize: S.maxTotalSize.unwrap().nullable().optional(),
    maxFiles: S.maxFiles.unwrap().nullable().optional(),
    tokenBudget: S.tokenBudget.unwrap().nullable().optional(),
    reserves: S.reserves.unwrap().nullable().optional(),
    ranking: S.ranking.unwrap().nullable().optional(),
    instructions: S.instructions.unwrap().nullable().optional(),
  })
  .strict();

const EXCLUSION_REASONS = [
  'excluded-glob',
  'not-included',
  'binary',
  'max-file-size',
  'max-files',
  'max-total-size',
  'token-budget',
  'unreadable',
] as const;
const ExclusionReason = z.enum(EXCLUSION_REASONS);

const RankedFile = z.object({
  resource: z.string(),
  path: z.string(),
  bytes: Int,
  tokens: Int,
  score: z.number(),
  why: z.array(z.object({ strategy: Ranking, score: z.number(), reason: z.string() })),
  included: z.boolean(),
  excludedBy: ExclusionReason.optional(),
});

/** An instruction file: why it is read (`root`, `folder of <file>`, `named by project|action`), or why it was left out. */
const InstructionFile = z.object({
  resource: z.string(),
  path: z.string(),
  bytes: Int,
  tokens: Int,
  truncated: z.boolean(),
  why: z.string(),
  included: z.boolean(),
  excludedBy: z.enum(['max-tokens', 'token-budget', 'missing', 'binary', 'unreadable']).optional(),
});

export const ContextInspection = z.object({
  project: z.string(),
  view: View,
  goal: z.string(),
  planId: z.string().optional(),
  settings: EffectiveSettings,
  budget: z.object({
    modelWindow: Int,
    reserves: z.object({ system: Int, history: Int, answer: Int }),
    available: Int,
    source: z.enum(['override', 'view', 'window']),
    used: Int,
  }),
  inventory: z.array(z.object({ resource: z.string(), files: Int, bytes: Int })),
  /** Absent from agents before extension 1.4. */
  instructions: z.array(InstructionFile).optional(),
  files: z.array(RankedFile),
  cut: z.partialRecord(ExclusionReason, Int),
  totals: z.object({ included: Int, includedTokens: Int, includedBytes: Int, excluded: Int }),
  snapshot: z.string(),
  dryRun: z.boolean(),
});

// The context methods came with extension version 1.2 (`since`).
export const contextShow = defineContract({
  name: '_cleveragents/context/show',
  surface: 'extension',
  since: '1.2',
  summary: "A project's effective context settings per view, and where each value came from.",
  permission: 'registry:read',
  scope: BY_PROJECT,
  params: z.object({ project: EntityName, view: View.optional() }).strict(),
  result: ContextShowResult,
});

export const contextSet = defineContract({
  name: '_cleveragents/context/set',
  surface: 'extension',
  since: '1.2',
  summary: "Set (or clear, with null) fields of one view's context settings; a new project revision.",
  permission: 'registry:write',
  scope: BY_PROJECT,
  params: z
    .object({
      project: EntityName,
      view: View,
      settings: SetSettings,
      expectedRevision: z.number().int().positive().optional(),
    })
    .strict(),
  result: ContextShowResult,
});

export const contextInspect = defineContract({
  name: '_cleveragents/context/inspect',
  surface: 'extension',
  since: '1.2',
  summary: 'What is in the context for a plan or a goal, and why: score, tokens, what each limit cut.',
  permission: 'registry:read',
  scope: BY_PROJECT,
  params: z
    .object({
      project: EntityName,
      view: View.optional(),
      planId: Ulid.optional(),
      goal: Goal.optional(),
      budget: Budget.optional(),
    })
    .strict()
    .refine((p) => p.planId === undefined || p.goal === undefined, {
      message: 'give a plan or a goal, not both',
      path: ['goal'],
    }),
  result: ContextInspection,
});

export const contextSimulate = defineContract({
  name: '_cleveragents/context/simulate',
  surface: 'extension',
  since: '1.2',
  summary: 'A dry run of inspect for a goal: nothing is assembled for real, tokens are estimated.',
  permission: 'registry:read',
  scope: BY_PROJECT,
  params: z.object({ project: EntityName, goal: Goal, view: View.optional(), budget: Budget.optional() }).strict(),
  result: ContextInspection,
});

/** The context family: every row of context.contract.ts, in the table's order. */
export const CONTEXT_METHODS = {
  contextShow,
  contextSet,
  contextInspect,
  contextSimulate,
} as const satisfies ContractFamily;
