import type { Session } from '../../domain/session.ts';
import type {
  ForkedTurn,
  SessionCursor,
  SessionPage,
  SessionRepository,
  SessionSettings,
} from '../../application/index.ts';
import { isConstraintError } from './storage-failures.ts';
import { param, type SqliteDatabase } from './database.ts';
import { toIsoInstant } from './iso-instant.ts';
import {
  activityInstant,
  addSessionTasks,
  deleteIdleSessions,
  deleteSession,
  insertSession,
  listSessions,
  pageLimit,
  SESSION_COLUMNS,
  selectSession,
  sessionExists,
  sessionRow,
  settingsRow,
  sessionsByIdPrefix,
  toSession,
  toSessionPage,
  touchSession,
  updateSessionSettings,
  type SessionRow,
} from './rows/session.rows.ts';
import { forkRows, forkStatements } from './rows/session-fork.rows.ts';
import { CoalescedUpdates } from './group-commit.ts';
import { messageOf } from '../../domain/errors.ts';

/** What touches of one session add up to: tasks added, and the latest activity (if any was known). */
interface Touch {
  added: number;
  at: string | undefined;
}

/** Chat sessions in SQLite, listed newest activity first. */
export class SqliteSessionRepository implements SessionRepository {
  private readonly q;
  /**
   * A session is touched when a task starts in it and when a turn settles, often in the same group
   * commit as its row's insert (a new context) and as each other: its row and its listing index are
   * then rewritten once per group. The sum of the tasks and the latest instant are what the touches
   * one after another would leave. Other writes of sessions run the queue first.
   */
  private readonly touches: CoalescedUpdates<Touch>;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.db = db;
    const k = db.kysely;
    const id = param<string>('id');
    const at = param<string>('at');
    const added = param<number>('added');
    const placeholders = Object.fromEntries(SESSION_COLUMNS.map((c) => [c, param(c)])) as unknown as SessionRow;
    this.q = {
      insert: db.prepare(insertSession(k, placeholders)),
      select: db.prepare(selectSession(k, id)),
      touch: db.prepare(touchSession(k, id, at, added)),
      update: db.prepare(
        updateSessionSettings(k, id, { actor: param('actor'), skills: param('skills'), context: param('context') }, at),
      ),
      addTasks: db.prepare(addSessionTasks(k, id, added)),
      delete: db.prepare(deleteSession(k, id)),
      deleteIdle: db.prepare(deleteIdleSessions(k, param('before'), param('limit'), 'sqlite')),
    };
    const q = this.q;
    this.touches = new CoalescedUpdates<Touch>(
      db,
      (a, b) => ({
        added: a.added + b.added,
        at: a.at === undefined || (b.at !== undefined && b.at > a.at) ? b.at : a.at,
      }),
      // An unusable timestamp still counts the tasks: the activity happened, only its time is unknown.
      (id, { added, at }) => (at === undefined ? q.addTasks.run({ id, added }) : q.touch.run({ id, at, added })),
    );
  }

  async deleteIdle(before: string, limit: number): Promise<number> {
    const params = { before: toIsoInstant(before, 'before'), limit: pageLimit(limit) };
    return this.db.write(() => {
      this.touches.flush();
      return this.q.deleteIdle.run(params);
    });
  }

  async create(session: Session): Promise<void> {
    const params = sessionRow(session);
    try {
      await this.db.write(() => {
        this.touches.flush(params.id);
        return this.q.insert.run(params);
      });
    } catch (err) {
      if (isConstraintError(err, 'PRIMARYKEY')) throw sessionExists(session.id);
      throw err;
    }
  }

  /** One savepoint inside the group commit: all of the fork is stored, or none of it. */
  async createFork(session: Session, turns: readonly ForkedTurn[]): Promise<void> {
    const compiled = forkStatements(this.db.kysely, forkRows(session, turns, new Date())).map((q) => q.compile());
    const sqlite = this.db.sqlite;
    const store = sqlite.transaction(() => {
      for (const q of compiled) sqlite.prepare(q.sql).run(q.parameters);
    });
    try {
      await this.db.write(() => {
        // Outside the fork's savepoint: what it runs stays run if the fork is undone.
        this.touches.flush(session.id);
        store();
      });
    } catch (err) {
      if (isConstraintError(err, 'PRIMARYKEY') && /sessions\.id/.test(messageOf(err))) throw sessionExists(session.id);
      throw err;
    }
  }

  async get(id: string): Promise<Session | undefined> {
    const row = await this.db.exclusive(() => this.q.select.get({ id }));
    return row && toSession(row);
  }

  async updateSettings(id: string, settings: SessionSettings, at: string): Promise<boolean> {
    const params = { id, ...settingsRow(settings), at: toIsoInstant(at, 'at') };
    return (
      (await this.db.write(() => {
        this.touches.flush(id);
        return this.q.update.run(params);
      })) > 0
    );
  }

  async byIdPrefix(owner: string, prefix: string, limit: number): Promise<Session[]> {
    const query = sessionsByIdPrefix(this.db.kysely, owner, prefix, limit).compile();
    const rows = await this.db.exclusive(() => this.db.all(query));
    return rows.map(toSession);
  }

  async list(owner: string, limit: number, after?: SessionCursor, project?: string): Promise<SessionPage> {
    const n = pageLimit(limit);
    const { count, page } = listSessions(this.db.kysely, owner, n, after, project);
    const countQuery = count.compile();
    const pageQuery = page.compile();
    return this.db.exclusive(() =>
      this.db.sqlite.transaction(() => {
        const total = this.db.all(countQuery)[0]?.n ?? 0;
        return toSessionPage(this.db.all(pageQuery), n, total);
      })(),
    );
  }

  /** Bumps `updatedAt` (never backwards) and the task count; a missing session is not an error. */
  async touch(id: string, at: string, addedTasks: number): Promise<void> {
    const touch: Touch = { added: addedTasks, at: activityInstant(at) };
    await this.db.write(() => this.touches.add(id, touch));
  }

  async delete(id: string): Promise<boolean> {
    return (
      (await this.db.write(() => {
        this.touches.flush(id);
        return this.q.delete.run({ id });
      })) > 0
    );
  }
}
