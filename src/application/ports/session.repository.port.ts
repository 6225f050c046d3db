import type { UpdateCursor } from '../../domain/paging.js';
import type { Session } from '../../domain/session.js';

/** A position in an owner's sessions, newest first. */
export type SessionCursor = UpdateCursor;

export interface SessionPage {
  sessions: Session[];
  total: number;
  /** The last session returned, when more follow. */
  next?: SessionCursor | undefined;
}

export interface SessionRepository {
  create(session: Session): Promise<void>;
  get(id: string): Promise<Session | undefined>;
  /** Continues strictly after `after` (newest first). */
  list(owner: string, limit: number, after?: SessionCursor): Promise<SessionPage>;
  /** Marks activity: bumps `updatedAt` and adds to the task count. */
  touch(id: string, at: string, addedTasks: number): Promise<void>;
  delete(id: string): Promise<boolean>;
  /**
   * Retention: deletes at most `limit` sessions idle since before `before` that have no task left
   * and are not a plan's context. Returns how many went.
   */
  deleteIdle(before: string, limit: number): Promise<number>;
}
