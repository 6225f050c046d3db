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
