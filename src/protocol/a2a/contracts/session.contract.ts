import { z } from 'zod';
import { Task } from '../../../domain/a2a.model.ts';
import {
  ActorName,
  ChatContextMode,
  Session,
  SessionListItem,
  TurnChange,
  UndoOutcome,
} from '../../../domain/session.ts';
import { SessionContextPreview, SessionDiff } from '../../../domain/session-views.ts';
import { KeepTurns } from '../../../domain/registry/actor.definition.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

const SessionId = z.string().min(1, 'is required').max(128, 'is at most 128 characters');

export const SessionCreateParams = z
  .object({
    actor: ActorName.optional(),
    title: z.string().min(1, 'must not be empty').max(200, 'is at most 200 characters').optional(),
    project: ActorName.optional(),
    skills: z.array(ActorName).max(50, 'at most 50 skills').optional(),
    /** What the session's turns are given of the project's files: a repository map (default) or the selected files. */
    context: ChatContextMode.optional(),
  })
  .strict();

export const SessionListParams = z
  .object({
    pageSize: z.number().int().min(1, 'must be between 1 and 100').max(100, 'must be between 1 and 100').optional(),
    pageToken: z.string().optional(),
    /** Only the sessions bound to this project (1.5): what a client's `last` of the current project reads. */
    project: ActorName.optional(),
  })
  .strict();

export const SessionListResult = z.object({
  sessions: z.array(SessionListItem),
  nextPageToken: z.string(),
  totalSize: z.number().int(),
});

export const SessionShowParams = z
  .object({ sessionId: SessionId, turns: z.number().int().min(1).max(1000, 'is at most 1000').optional() })
  .strict();
export const SessionShowResult = z.object({
  session: Session,
  tasks: z.array(Task),
  /** The number of the first task shown: turns are numbered 1, 2, … from the session's first (1.5). */
  firstTurn: z.number().int().positive().optional(),
  /** Every turn of the session that changed the project's files, oldest first (1.5). */
  changes: z.array(TurnChange).optional(),
});

export const SessionDeleteParams = z.object({ sessionId: SessionId }).strict();
export const SessionDeleteResult = z.object({ deleted: z.literal(true), tasksDeleted: z.number().int().nonnegative() });

export const SessionCompactParams = z
  .object({
    sessionId: SessionId,
    keepTurns: KeepTurns.optional(),
  })
  .strict();
export const SessionCompactResult = z.object({
  /** The compaction task: completed, `metadata.cleveragents.kind` 'compaction', the `summary` artifact. */
  task: Task,
  /** Turns newly summarised. */
  compacted: z.number().int().positive(),
});

export const sessionCreate = defineContract({
  name: '_cleveragents/session/create',
  surface: 'extension',
  summary: 'Start a chat session with an actor (default: the server default actor).',
  permission: 'session:write',
  params: SessionCreateParams,
  result: Session,
});

export const sessionList = defineContract({
  name: '_cleveragents/session/list',
  surface: 'extension',
  summary: 'List your chat sessions, most recently active first.',
  permission: 'session:read',
  params: SessionListParams,
  result: SessionListResult,
});

export const sessionShow = defineContract({
  name: '_cleveragents/session/show',
  surface: 'extension',
  summary: 'A session and its turns (tasks with their history and artifacts), oldest first.',
  permission: 'session:read',
  params: SessionShowParams,
  result: SessionShowResult,
});

export const sessionDelete = defineContract({
  name: '_cleveragents/session/delete',
  surface: 'extension',
  summary: 'Delete a session and its tasks; running turns are cancelled first.',
  permission: 'session:write',
  params: SessionDeleteParams,
  result: SessionDeleteResult,
});

export const sessionCompact = defineContract({
  name: '_cleveragents/session/compact',
  surface: 'extension',
  since: '1.4',
  summary:
    "Summarise a session's older turns now (keeping the newest keepTurns; default the actor's compaction.keepTurns): the summary becomes a compaction task of the session and stands in for those turns in the next ones; the turns themselves stay.",
  permission: 'session:write',
  params: SessionCompactParams,
  result: SessionCompactResult,
});

// Resume and fork came with extension version 1.4.
export const SessionForkParams = z
  .object({
    sessionId: SessionId,
    atTaskId: z.string().min(1, 'is required').max(128, 'is at most 128 characters').optional(),
    title: z.string().min(1, 'must not be empty').max(200, 'is at most 200 characters').optional(),
  })
  .strict();

export const SessionResumeParams = z
  .object({
    sessionId: SessionId.optional(),
    turns: z.number().int().min(1, 'must be between 1 and 100').max(100, 'must be between 1 and 100').optional(),
  })
  .strict();

export const sessionFork = defineContract({
  name: '_cleveragents/session/fork',
  surface: 'extension',
  since: '1.4',
  summary:
    "Start a new session from another's history: its turns up to atTaskId (default: all; all finished) copied with new ids; the original is untouched.",
  permission: 'session:write',
  params: SessionForkParams,
  result: Session,
});

export const sessionResume = defineContract({
  name: '_cleveragents/session/resume',
  surface: 'extension',
  since: '1.4',
  summary: 'The session to continue (the given one, or your most recently active) and its last turns (default 3).',
  permission: 'session:read',
  params: SessionResumeParams,
  result: SessionShowResult,
});

export const SessionUndoParams = z
  .object({
    sessionId: SessionId,
    /** The turn (as session show numbers them) to undo with every later one; default the newest that changed files. */
    turn: z.number().int().min(1, 'must be at least 1').optional(),
    /** Overwrite files changed outside the agent since. */
    force: z.boolean().optional(),
  })
  .strict();

export const sessionUndo = defineContract({
  name: '_cleveragents/session/undo',
  surface: 'extension',
  since: '1.5',
  summary:
    "Put the project's files back as they were before a chat turn (default: the newest turn that changed files and is not undone); a turn given undoes it and every later one. Refused (-32004, the files named) when a file was changed outside the agent since, unless force.",
  permission: 'session:write',
  params: SessionUndoParams,
  result: UndoOutcome,
});

// Update, diff and context (the chat's /model, /diff, /tools, /context) join 1.5, the version in the making, with undo.
export const SessionUpdateParams = z
  .object({
    sessionId: SessionId,
    /** The actor of the next turns. */
    actor: ActorName.optional(),
    /** The skills added to the actor's from the next turn on (replacing the session's; empty: none). */
    skills: z.array(ActorName).max(50, 'at most 50 skills').optional(),
    context: ChatContextMode.optional(),
  })
  .strict();

export const sessionUpdate = defineContract({
  name: '_cleveragents/session/update',
  surface: 'extension',
  since: '1.5',
  summary:
    "Change what a session's next turns use: its actor, skills or context mode (the same checks as create: an actor you cannot read is not found). A turn already running keeps what it started with.",
  permission: 'session:write',
  params: SessionUpdateParams,
  result: Session,
});

export const SessionDiffParams = z
  .object({
    sessionId: SessionId,
    /** One turn's own change (as session show numbers them); default: every turn not undone, up to the files as they are now. */
    turn: z.number().int().min(1, 'must be at least 1').optional(),
  })
  .strict();

export const sessionDiff = defineContract({
  name: '_cleveragents/session/diff',
  surface: 'extension',
  since: '1.5',
  summary:
    "What a session's turns changed in the project's files, file by file (before the earliest turn not undone that changed it, and as it is now, marked when changed outside the agent since); with turn, that turn's own change.",
  permission: 'session:read',
  params: SessionDiffParams,
  result: SessionDiff,
});

export const SessionContextParams = z
  .object({
    sessionId: SessionId,
    /** The next message, whose words rank the project's files (default: none). */
    message: z.string().max(100_000, 'is at most 100000 characters').optional(),
  })
  .strict();

export const sessionContext = defineContract({
  name: '_cleveragents/session/context',
  surface: 'extension',
  since: '1.5',
  summary:
    "What a session's next turn would send to its model: the actor and model, the system prompt's parts, the earlier turns kept, the project's files, the tools offered, and the totals against the window. Nothing is sent to a model.",
  permission: 'session:read',
  params: SessionContextParams,
  result: SessionContextPreview,
});

/** The session family: every row of session.contract.ts, in the table's order. */
export const SESSION_METHODS = {
  sessionCreate,
  sessionList,
  sessionShow,
  sessionDelete,
  sessionCompact,
  sessionFork,
  sessionResume,
  sessionUndo,
  sessionUpdate,
  sessionDiff,
  sessionContext,
} as const satisfies ContractFamily;
