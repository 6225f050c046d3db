import { z } from 'zod';
import { Timestamp } from './a2a.model.ts';

export const ActorName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]*\/[a-z][a-z0-9_-]*$/, 'must be namespace/name (lowercase letters, digits, - and _)');

/**
 * What a chat turn on a project is given of its files: `map`, the instruction files and a
 * repository map (paths and top-level symbols; the model reads the rest with its tools), or
 * `full`, the files the context service selects for the message (its `default` view).
 */
export const CHAT_CONTEXT_MODES = ['map', 'full'] as const;
export const ChatContextMode = z.enum(CHAT_CONTEXT_MODES, { error: `must be one of ${CHAT_CONTEXT_MODES.join(', ')}` });
export type ChatContextMode = z.infer<typeof ChatContextMode>;

/** A chat session: the A2A context behind `message/send`. Its id is the A2A contextId. */
export const Session = z.object({
  id: z.string(),
  owner: z.string(),
  actor: ActorName,
  title: z.string().optional(),
  /** The project whose resources the session's tools work on (none: the actor has no files). */
  project: ActorName.optional(),
  /** Skills the session adds to its actor's (e.g. `agents actor run --skill`). */
  skills: z.array(ActorName).optional(),
  /** What its turns are given of the project's files (absent: `map`). */
  context: ChatContextMode.optional(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  taskCount: z.number().int().nonnegative(),
  /** The session this one was forked from, and the last of its turns copied (absent: none copied). */
  forkedFrom: z.object({ sessionId: z.string(), taskId: z.string().optional() }).optional(),
});
export type Session = z.infer<typeof Session>;

/** A session as a list shows it: with the start of the message that opened it (absent: no turn yet). */
export const SessionListItem = Session.extend({ firstMessage: z.string().optional() });
export type SessionListItem = z.infer<typeof SessionListItem>;

/** How much of the first message a list carries: enough to recognise a session, never a whole paste. */
export const FIRST_MESSAGE_CHARS = 200;

/** What one turn of a session changed in its project's files (the undo history). */
export const TurnChange = z.object({
  /** The turn's number: its 1-based place among the session's turns, oldest first. */
  turn: z.number().int().positive(),
  taskId: z.string(),
  /** Files changed (relative to the project directory, sorted). */
  files: z.array(z.string()),
  /** Whether an undo has put them back. */
  undone: z.boolean(),
  undoneAt: Timestamp.optional(),
});
export type TurnChange = z.infer<typeof TurnChange>;

/** What an undo did: the turns it undid (oldest first) and the files it put back. */
export const UndoOutcome = z.object({
  sessionId: z.string(),
  turns: z.array(TurnChange),
  /** Every file put back (relative to the project directory, sorted). */
  files: z.array(z.string()),
  /** Files changed outside the agent since that were overwritten (`force`). */
  overwritten: z.array(z.string()),
});
export type UndoOutcome = z.infer<typeof UndoOutcome>;
