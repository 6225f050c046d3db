import { sql } from 'kysely';
import type { Session } from '../../../domain/session.ts';
import type {
  ForkedTurn,
  SessionCursor,
  SessionPage,
  SessionRepository,
  SessionSettings,
} from '../../../application/index.ts';
import { toIsoInstant } from '../iso-instant.ts';
import {
  deleteIdleSessions,
  deleteSession,
  listSessions,
  pageLimit,
  selectSession,
  sessionExists,
  sessionRow,
  settingsRow,
  sessionsByIdPrefix,
  toSession,
  toSessionPage,
  updateSessionSettings,
} from '../rows/session.rows.ts';
import { forkRows, forkStatements } from '../rows/session-fork.rows.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';
import { PgSessionWrites } from './pg-session-writes.ts';

/**
 * Chat sessions in PostgreSQL, listed newest activity first. Activity (touch) is one conditional
 * update, so instances counting tasks into one session at once never lose a count; a new row and
 * the touches of a send ride in the statements of its task's writes (PgSessionWrites).
 */
export class PgSessionRepository implements SessionRepository {
  private readonly db: PgDatabase;
  private readonly writes: PgSessionWrites;

  constructor(db: PgDatabase) {
    this.db = db;
    this.writes = PgSessionWrites.of(db);
  }

  async create(session: Session): Promise<void> {
    // With its first task's create when one follows at once (PgSessionWrites), else alone.
    await this.writes.insert(sessionRow(session));
  }

  /** One transaction: other instances see the fork whole or not at all. */
  async createFork(session: Session, turns: readonly ForkedTurn[]): Promise<void> {
    const rows = forkRows(session, turns, new Date());
    try {
      await this.db.transaction(async (trx) => {
        for (const q of forkStatements(trx, rows)) await q.execute();
      });
    } catch (err) {
      if (isPgConstraintError(err, 'unique') && (err as { constraint?: unknown }).constraint === 'sessions_pkey')
        throw sessionExists(session.id);
      throw err;
    }
  }

  async get(id: string): Promise<Session | undefined> {
    const row = await this.db.run((k) => selectSession(k, id).executeTakeFirst());
    return row && toSession(row);
  }

  async byIdPrefix(owner: string, prefix: string, limit: number): Promise<Session[]> {
    const rows = await this.db.run((k) => sessionsByIdPrefix(k, owner, prefix, limit).execute());
    return rows.map(toSession);
  }

  async list(owner: string, limit: number, after?: SessionCursor, project?: string): Promise<SessionPage> {
    const n = pageLimit(limit);
    return this.db.transaction(async (trx) => {
      // The total and the page from one snapshot, as SQLite's one read transaction gives.
      await sql`set transaction isolation level repeatable read`.execute(trx);
      const { count, page } = listSessions(trx, owner, n, after, project);
      const total = (await count.executeTakeFirst())?.n ?? 0;
      return toSessionPage(await page.execute(), n, total);
    });
  }

  /** Bumps `updatedAt` (never backwards) and the task count; a missing session is not an error. */
  touch(id: string, at: string, addedTasks: number): Promise<void> {
    // In the statement of a queued write of a task of this session when there is one.
    return this.writes.touch(id, at, addedTasks);
  }

  async updateSettings(id: string, settings: SessionSettings, at: string): Promise<boolean> {
    const row = settingsRow(settings);
    const r = await this.db.run((k) => updateSessionSettings(k, id, row, toIsoInstant(at, 'at')).executeTakeFirst());
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.db.run((k) => deleteSession(k, id).executeTakeFirst());
    return Number(r.numDeletedRows) > 0;
  }

  async deleteIdle(before: string, limit: number): Promise<number> {
    const instant = toIsoInstant(before, 'before');
    const n = pageLimit(limit);
    const r = await this.db.run((k) => deleteIdleSessions(k, instant, n, 'postgresql').executeTakeFirst());
    return Number(r.numDeletedRows);
  }
}
