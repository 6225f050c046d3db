import type { Task } from '../../domain/a2a.model.ts';
import type { UpdateCursor } from '../../domain/paging.ts';
import type { Session } from '../../domain/session.ts';
import type { Transcript } from './transcript.port.ts';

/** A position in an owner's sessions, newest first. */
export type SessionCursor = UpdateCursor;

export interface SessionPage {
  sessions: Session[];
  total: number;
  /** The last session returned, when more follow. */
  next?: SessionCursor | undefined;
}

/** A turn copied into a forked session: the task (ids already its own, terminal) and its transcript. */
export interface ForkedTurn {
  task: Task;
  transcript?: Transcript | undefined;
}

/** What `session/update` changes: the settings the session's next turns read. */
export type SessionSettings = Pick<Session, 'actor' | 'skills' | 'context'>;

export interface SessionRepository {
  create(session: Session): Promise<void>;
  /**
   * Stores a forked session with its copied turns (oldest first; owned by the session's owner,
   * listed in this order) and their transcripts, in one transaction: the session is not visible
   * until all of it is stored, and nothing is left if any of it fails. ALREADY_EXISTS when the
   * session id is taken.
   */
  createFork(session: Session, turns: readonly ForkedTurn[]): Promise<void>;
  get(id: string): Promise<Session | undefined>;
  /**
   * Rewrites what the session's next turns use (its actor, skills and context mode; an absent
   * skills or context clears it) and bumps `updatedAt`. False when there is no such session.
   */
  updateSettings(id: string, settings: SessionSettings, at: string): Promise<boolean>;
  /** Up to `limit` of the owner's sessions whose id starts with `prefix` (`%` and `_` are plain characters). */
  byIdPrefix(owner: string, prefix: string, limit: number): Promise<Session[]>;
  /** Continues strictly after `after` (newest first); with `project`, only the sessions bound to it. */
  list(owner: string, limit: number, after?: SessionCursor, project?: string): Promise<SessionPage>;
  /** Marks activity: bumps `updatedAt` and adds to the task count. */
  touch(id: string, at: string, addedTasks: number): Promise<void>;
  delete(id: string): Promise<boolean>;
  /**
   * Retention: deletes at most `limit` sessions idle since before `before` that have no task left
   * and are not a plan's context. Returns how many went.
   */
  deleteIdle(before: string, limit: number): Promise<number>;
}
