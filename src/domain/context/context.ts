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

/** The file names read as instructions at a resource's root and in its folders, in this order within a folder. */
export const INSTRUCTION_FILE_NAMES = ['AGENTS.md', 'CLEVERAGENTS.md'] as const;

/**
 * A file a project or an action names as instructions: relative to the root of a resource of the
 * project, `/`-separated, never absolute and never climbing out (`..`).
 */
export const InstructionPath = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'is at most 500 characters')
  .refine((p) => !p.startsWith('/') && !p.startsWith('\\') && !/^[A-Za-z]:/.test(p), {
    message: 'must be relative to the resource root, not an absolute path',
  })
  .refine((p) => !p.split(/[\\/]/).includes('..'), {
    message: 'must stay inside the resource (no ..)',
  })
  .refine((p) => !p.includes('\0'), { message: 'must not contain a NUL character' });

/** Instruction files (AGENTS.md, CLEVERAGENTS.md, and the files named here) and their limits. */
export const InstructionSettings = z
  .object({
    /** More files to read as instructions, relative to a resource's root. */
    files: z.array(InstructionPath).max(50, 'at most 50 files').optional(),
    /** Bytes: a larger file is cut to this size (and marked truncated). */
    maxFileSize: Count.max(1024 * 1024).optional(),
    /** Tokens of all instruction files together: files past it are left out. */
    maxTokens: z.number().int().min(0).optional(),
    /** false: no instruction file is read. */
    enabled: z.boolean().optional(),
  })
  .strict();
export type InstructionSettings = z.infer<typeof InstructionSettings>;

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
    instructions: InstructionSettings.optional(),
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
  instructions: { files: string[]; maxFileSize: number; maxTokens: number; enabled: boolean };
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
  instructions: { files: [], maxFileSize: 16_384, maxTokens: 4_000, enabled: true },
};
