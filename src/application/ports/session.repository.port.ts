import type { Session } from '../../domain/session.js';

export interface SessionPage {
  sessions: Session[];
  total: number;
  nextCursor?: string | undefined;
}

export interface SessionRepository {
  create(session: Session): Promise<void>;
  get(id: string): Promise<Session | undefined>;
  list(owner: string, limit: number, cursor?: string): Promise<SessionPage>;
  /** Marks activity: bumps `updatedAt` and adds to the task count. */
  touch(id: string, at: string, addedTasks: number): Promise<void>;
  delete(id: string): Promise<boolean>;
  /**
   * Retention: deletes at most `limit` sessions idle since before `before` that have no task left
   * and are not a plan's context. Returns how many went.
   */
  deleteIdle(before: string, limit: number): Promise<number>;
}
