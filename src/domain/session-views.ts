/**
 * What `session/diff` and `session/context` answer: what a chat session changed in its project's
 * files, and what its next turn would send to its model. Every front end reads these structures
 * (the CLI, the chat's `/diff` and `/context`), so none parses a diff or recounts a prompt.
 */
import { z } from 'zod';
import { DiffFile } from './plan/plan-views.ts';
import { ChatContextMode } from './session.ts';

/** One file a session's turns changed: before the earliest of them, and after. */
export const SessionDiffFile = DiffFile.extend({
  /** The turns (numbers, oldest first) that changed it and are not undone. */
  turns: z.array(z.number().int().positive()),
  /** Changed outside the agent since its last turn wrote it: the after side is the file as it is now. */
  changedOutside: z.boolean(),
});
export type SessionDiffFile = z.infer<typeof SessionDiffFile>;

export const SessionDiff = z.object({
  sessionId: z.string(),
  /** The one turn shown (its before and after); absent: every turn not undone, up to the files as they are now. */
  turn: z.number().int().positive().optional(),
  files: z.array(SessionDiffFile),
  /** The same files as unified diff text (git's `a/` `b/` headers). */
  unified: z.string(),
});
export type SessionDiff = z.infer<typeof SessionDiff>;

const Tokens = z.number().int().nonnegative();

/** What the next turn of a session would send: counted as the turn counts, nothing sent. */
export const SessionContextPreview = z.object({
  sessionId: z.string(),
  actor: z.string(),
  /** The actor's model and window; absent for a built-in actor, which sends nothing to a model. */
  model: z
    .object({
      provider: z.string(),
      model: z.string(),
      contextWindow: Tokens,
      /** Kept free for the answer (maxTokens, at most half the window). */
      reserve: Tokens,
    })
    .optional(),
  /** The system prompt: the actor's and its skills' instructions, the compaction summary, the project's files. */
  system: z.object({
    tokens: Tokens,
    instructions: Tokens,
    compaction: Tokens,
    project: Tokens,
  }),
  history: z.object({
    /** Earlier turns of the session (compaction tasks not counted). */
    turns: z.number().int().nonnegative(),
    /** Of them, covered by the newest compaction's summary. */
    compacted: z.number().int().nonnegative(),
    /** Sent as they are (the newest that fit the window). */
    kept: z.number().int().nonnegative(),
    /** Left out to fit the window. */
    dropped: z.number().int().nonnegative(),
    /** Model messages of the kept turns. */
    messages: z.number().int().nonnegative(),
    tokens: Tokens,
    /** Turns the next turn would summarise first (its actor's compaction threshold is passed). */
    compactionDue: z.number().int().nonnegative(),
  }),
  /** The session's project as the turn sees it (absent: the session has none). */
  project: z
    .object({
      name: z.string(),
      mode: ChatContextMode,
      tokens: Tokens,
      /** `map`: the files the map could show and how many it shows. */
      map: z.object({ files: z.number().int(), shown: z.number().int() }).optional(),
      /** `full`: the files selected, each with its tokens. */
      files: z.array(z.object({ resource: z.string(), path: z.string(), tokens: Tokens })).optional(),
      instructions: z.array(z.object({ resource: z.string(), path: z.string(), tokens: Tokens })).optional(),
      /** Why the files could not be selected (the turn would say so to the model). */
      problem: z.string().optional(),
    })
    .optional(),
  tools: z.array(z.object({ name: z.string(), description: z.string(), readOnly: z.boolean() })),
  /** The tools' schemas as sent, counted. */
  toolTokens: Tokens,
  /** What the turn could not offer, and why (an MCP server down, …). */
  problems: z.array(z.string()),
  /** The prompt without the new message, against the room the window leaves after the reserve. */
  totals: z.object({ tokens: Tokens, room: Tokens, window: Tokens }),
});
export type SessionContextPreview = z.infer<typeof SessionContextPreview>;
