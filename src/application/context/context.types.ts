/**
 * The context service's contract (DESIGN.md §4.5): what `_cleveragents/context/{show,set,inspect,simulate}`
 * answer, and what the plan and chat actors get from `assemble`. Implemented by ContextService
 * (context.service.ts); the protocol and the CLI depend on these types only.
 */
import type {
  ContextView,
  ContextViewSettings,
  EffectiveContextSettings,
  Ranking,
} from '../../domain/context/context.ts';
import type { ChatContextMode } from '../../domain/session.ts';

/** Where an effective value came from. */
export type SettingSource = 'builtin' | `view:${ContextView}`;

export interface ContextShowInput {
  project: string;
  /** One view; absent: all four. */
  view?: ContextView | undefined;
}

export interface ViewSettingsShown {
  view: ContextView;
  settings: EffectiveContextSettings;
  /** For each field of `settings`, where its value came from. */
  sources: Record<keyof EffectiveContextSettings, SettingSource>;
}

export interface ContextShowResult {
  project: string;
  /** The project's revision (pass it as expectedRevision to `set`). */
  revision: number;
  views: ViewSettingsShown[];
}

export interface ContextSetInput {
  project: string;
  view: ContextView;
  /** The fields to set; a field given as null is cleared (the view inherits it again). */
  settings: { [K in keyof ContextViewSettings]?: ContextViewSettings[K] | null };
  /** Refused (STALE_REVISION) when the project moved on. */
  expectedRevision?: number | undefined;
}

/** What to assemble for: a plan (its goal, projects, decisions) or a goal on a project. */
export interface ContextQuery {
  project: string;
  view?: ContextView | undefined;
  /** A plan of the caller's: its goal, its decisions so far, and the plan's project. */
  planId?: string | undefined;
  goal?: string | undefined;
  /** Tokens of file text; overrides the view's budget. */
  budget?: number | undefined;
}

export type ExclusionReason =
  | 'excluded-glob'
  | 'not-included'
  | 'binary'
  | 'max-file-size'
  | 'max-files'
  | 'max-total-size'
  | 'token-budget'
  | 'unreadable';

export interface RankedFile {
  resource: string;
  /** Relative to the resource's root, `/`-separated. */
  path: string;
  bytes: number;
  /** Exact (inspect, assemble) or estimated from the size (simulate). */
  tokens: number;
  score: number;
  /** Each strategy's contribution to the score, with its reason ("goal term 'date' in path"). */
  why: Array<{ strategy: Ranking; score: number; reason: string }>;
  included: boolean;
  excludedBy?: ExclusionReason | undefined;
}

/** Why an instruction file was left out: the instructions' token limit, the context's budget, or the file itself. */
export type InstructionExclusion = 'max-tokens' | 'token-budget' | 'missing' | 'binary' | 'unreadable';

/**
 * An instruction file (AGENTS.md, CLEVERAGENTS.md, or one a project or an action names) and why it
 * is read: `root`, `folder of <file in play>`, `named by project`, `named by action`.
 */
export interface InstructionFile {
  resource: string;
  /** Relative to the resource's root, `/`-separated. */
  path: string;
  /** The file's size (0 when missing). */
  bytes: number;
  /** Of the text given (cut to maxFileSize when truncated); estimated from the size in a dry run. */
  tokens: number;
  /** The file is larger than maxFileSize: only its first maxFileSize bytes are given. */
  truncated: boolean;
  why: string;
  included: boolean;
  excludedBy?: InstructionExclusion | undefined;
}

export interface ContextBudget {
  /** The model's window the budget comes from (the view's actor, or the default). */
  modelWindow: number;
  reserves: { system: number; history: number; answer: number };
  /** Tokens of file text allowed (instruction files and files together). */
  available: number;
  source: 'override' | 'view' | 'window';
  /** By the instruction files and the files together. */
  used: number;
}

export interface ContextInspection {
  project: string;
  view: ContextView;
  goal: string;
  planId?: string | undefined;
  settings: EffectiveContextSettings;
  budget: ContextBudget;
  /** Files considered (after .gitignore), per resource. */
  inventory: Array<{ resource: string; files: number; bytes: number }>;
  /**
   * The instruction files, in the order the actor reads them (nearest to the files in play first,
   * then the roots, then those named by the project and by the action), then those left out.
   */
  instructions: InstructionFile[];
  /** The ranked candidates: included ones first, then the best of those cut (at most 200 listed). */
  files: RankedFile[];
  /** How many files each limit cut. */
  cut: Partial<Record<ExclusionReason, number>>;
  totals: { included: number; includedTokens: number; includedBytes: number; excluded: number };
  /** A hash of what is included (paths and contents): the snapshot reference decisions keep. */
  snapshot: string;
  /** simulate: true (nothing was read for real; tokens are estimates). */
  dryRun: boolean;
}

/** What an actor is given: the inspection, and the text of each included instruction file and file. */
export interface AssembledContext extends ContextInspection {
  /** The included instruction files' text, in `instructions` order. */
  instructionFragments: Array<{
    resource: string;
    path: string;
    tokens: number;
    bytes: number;
    truncated: boolean;
    why: string;
    text: string;
  }>;
  fragments: Array<{ resource: string; path: string; tokens: number; text: string }>;
}

/** A reference to the context an actor saw, as a decision keeps it. */
export interface ContextSnapshotRef {
  snapshot: string;
  view: ContextView;
  project: string;
  files: Array<{ resource: string; path: string; tokens: number; score: number }>;
  /** The instruction files read (absent when none). */
  instructions?: Array<{ resource: string; path: string; tokens: number; why: string }> | undefined;
  tokens: number;
  budget: number;
}

export function snapshotRef(c: ContextInspection): ContextSnapshotRef {
  const instructions = c.instructions
    .filter((f) => f.included)
    .map((f) => ({ resource: f.resource, path: f.path, tokens: f.tokens, why: f.why }));
  return {
    ...(instructions.length > 0 ? { instructions } : {}),
    snapshot: c.snapshot,
    view: c.view,
    project: c.project,
    files: c.files
      .filter((f) => f.included)
      .map((f) => ({ resource: f.resource, path: f.path, tokens: f.tokens, score: f.score })),
    tokens: c.totals.includedTokens,
    budget: c.budget.available,
  };
}

/** What a chat turn asks of the context service (see ContextProvider.chatContext). */
export interface ChatContextInput {
  project: string;
  /** The message: its words rank the files. */
  goal: string;
  mode: ChatContextMode;
  /** The actor's window (default LLM_ACTOR_DEFAULTS.contextWindow) and answer reserve (`full` only). */
  modelWindow?: number | undefined;
  answerReserve?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What a chat turn is given of its project's files, as text for the system prompt. */
export interface ChatContext {
  /** Empty when there is nothing to give (no instruction files, and no room for a map). */
  text: string;
  /**
   * Tokens of `text`: counted exactly in `map` mode; in `full` mode the files' and instruction
   * files' counts plus their headings'.
   */
  tokens: number;
  /** `full`: the context the turn saw, as a decision keeps it. */
  snapshot?: ContextSnapshotRef | undefined;
  /** `map`: files the map could show, and those it names (with their symbols or by path). */
  map?: { files: number; shown: number } | undefined;
}

/**
 * What the plan engine and the chat toolbox need of the context service (no principal: the caller
 * has checked access to the plan or the session already).
 */
export interface ContextProvider {
  assemble(input: {
    project: string;
    view: ContextView;
    goal: string;
    /** Paths and words of the decisions so far (the `decisions` ranking). */
    decisions?: string[] | undefined;
    /** The plan's action: the instruction files it names are read too. */
    action?: string | undefined;
    /** The actor's window (default LLM_ACTOR_DEFAULTS.contextWindow) and answer reserve. */
    modelWindow?: number | undefined;
    answerReserve?: number | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<AssembledContext>;
  /**
   * A chat turn's context. `map` (a chat's default): the project's instruction files and a
   * repository map ranked for the message, together at most 5% of the window and 8,000 tokens
   * (instruction files first, within their own maxTokens). `full`: the `default` view's files,
   * as `fragmentsText(assembled, 'for this message')`.
   */
  chatContext(input: ChatContextInput): Promise<ChatContext>;
}

/**
 * The instruction files of an assembled context as an actor reads them: a heading, then each
 * file's text under its name and why it is read (empty when there are none).
 */
export function instructionsText(c: Pick<AssembledContext, 'project' | 'instructionFragments'>): string {
  if (c.instructionFragments.length === 0) return '';
  const tokens = c.instructionFragments.reduce((n, f) => n + f.tokens, 0);
  return [
    `Instructions for project ${c.project} from its instruction files (${c.instructionFragments.length}, ${tokens} tokens; the nearest to the files first). Follow them:`,
    ...c.instructionFragments.map((f) => {
      const cut = f.truncated ? `\n[truncated: only the first part of its ${f.bytes} bytes is shown]` : '';
      return `=== ${f.path} (${f.resource}, ${f.why}) ===\n${f.text}${cut}`;
    }),
  ].join('\n\n');
}

/**
 * What an assembled context gives an actor: its instruction files first, then the files under a
 * heading, each file's text under its path (empty when there are neither). `purpose`: what the
 * files were selected for.
 */
export function fragmentsText(c: AssembledContext, purpose: string): string {
  const parts = [instructionsText(c)];
  if (c.fragments.length > 0) {
    const total = c.inventory.reduce((n, r) => n + r.files, 0);
    parts.push(
      [
        `Files of project ${c.project} the context service selected ${purpose} (${c.fragments.length} of ${total}, ${c.totals.includedTokens} tokens):`,
        ...c.fragments.map((f) => `--- ${f.path} ---\n${f.text}`),
      ].join('\n\n'),
    );
  }
  return parts.filter((p) => p !== '').join('\n\n');
}
