/**
 * The context an actor sees (DESIGN.md §4.5): per project and view, which files of its resources
 * are candidates (include/exclude globs on top of `.gitignore`), the limits that cut them (file
 * size, total size, file count, token budget) and how the candidates are ranked. A project keeps
 * its settings in `settings.context`: the top-level fields are the `default` view, `views` the
 * others. Views inherit `default → strategize → execute → apply` field by field.
 */
import { z } from 'zod';

export const CONTEXT_VIEWS = ['default', 'strategize', 'execute', 'apply'] as const;
export type ContextView = (typeof CONTEXT_VIEWS)[number];
/** A view's parent: a field it does not set comes from there (default: from the built-in defaults). */
export const VIEW_PARENT: Readonly<Record<ContextView, ContextView | undefined>> = {
  default: undefined,
  strategize: 'default',
  execute: 'strategize',
  apply: 'execute',
};

/**
 * How candidates are ranked: terms of the goal (and the current decision) in the path and the
 * text; recency in git history; references from files already in the context; paths the plan's
 * decisions so far name.
 */
export const RANKINGS = ['goal-match', 'recency', 'references', 'decisions'] as const;
export type Ranking = (typeof RANKINGS)[number];

const Glob = z.string().min(1).max(500);
const Count = z.number().int().min(1);

export const ContextReserves = z
  .object({
    /** Tokens kept for the system prompt and the tool definitions. */
    system: z.number().int().min(0).optional(),
    /** Tokens kept for the conversation so far. */
    history: z.number().int().min(0).optional(),
    /** Tokens kept for the model's answer (default: the actor's maxTokens). */
    answer: z.number().int().min(0).optional(),
  })
  .strict();

export const ContextViewSettings = z
  .object({
    include: z.array(Glob).max(200).optional(),
    exclude: z.array(Glob).max(200).optional(),
    /** Bytes: a larger file is left out. */
    maxFileSize: Count.optional(),
    /** Bytes of all included files together. */
    maxTotalSize: Count.optional(),
    maxFiles: Count.max(100_000).optional(),
    /** Tokens of file text the actor is given (absent: the model's window minus the reserves). */
    tokenBudget: Count.optional(),
    reserves: ContextReserves.optional(),
    ranking: z.array(z.enum(RANKINGS)).max(RANKINGS.length).optional(),
  })
  .strict();
export type ContextViewSettings = z.infer<typeof ContextViewSettings>;

/** `settings.context` of a project: the default view's fields, and the other views'. */
export const ProjectContextSettings = ContextViewSettings.extend({
  views: z
    .object({
      strategize: ContextViewSettings.optional(),
      execute: ContextViewSettings.optional(),
      apply: ContextViewSettings.optional(),
    })
    .strict()
    .optional(),
}).strict();
export type ProjectContextSettings = z.infer<typeof ProjectContextSettings>;

/** Every field resolved. */
export interface EffectiveContextSettings {
  include: string[];
  exclude: string[];
  maxFileSize: number;
  maxTotalSize: number;
  maxFiles: number;
  /** undefined: the model's window minus the reserves. */
  tokenBudget: number | undefined;
  reserves: { system: number; history: number; answer: number };
  ranking: Ranking[];
}

export const CONTEXT_DEFAULTS: EffectiveContextSettings = {
  include: ['**'],
  exclude: [],
  maxFileSize: 256 * 1024,
  maxTotalSize: 4 * 1024 * 1024,
  maxFiles: 400,
  tokenBudget: undefined,
  reserves: { system: 2_000, history: 8_000, answer: 4_096 },
  ranking: [...RANKINGS],
};
