import { AppError } from '../../domain/errors.js';
import type { Session } from '../../domain/session.js';
import type { SessionCursor, SessionPage, SessionRepository } from '../../application/index.js';
import {
  isConstraintError,
  olderThan,
  param,
  toIsoInstant,
  type SessionsTable,
  type SqliteDatabase,
} from './database.js';

const COLUMNS = [
  'id',
  'owner',
  'actor',
  'title',
  'created_at',
  'updated_at',
  'task_count',
  'project',
  'skills',
] as const;

/** Chat sessions in SQLite, listed newest activity first. */
export class SqliteSessionRepository implements SessionRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    const k = db.kysely;
    const id = param<string>('id');
    const at = param<string>('at');
    this.q = {
      insert: db.prepare(
        k.insertInto('sessions').values({
          id,
          owner: param('owner'),
          actor: param('actor'),
          title: param('title'),
          created_at: param('createdAt'),
          updated_at: param('updatedAt'),
          task_count: param('taskCount'),
          project: param('project'),
          skills: param('skills'),
        }),
      ),
      select: db.prepare(k.selectFrom('sessions').select(COLUMNS).where('id', '=', id)),
      // CASE rather than max()/greatest(), which differ between SQLite and PostgreSQL.
      touch: db.prepare(
        k
          .updateTable('sessions')
          .set((eb) => ({
            updated_at: eb.case().when('updated_at', '<', at).then(at).else(eb.ref('updated_at')).end(),
            task_count: eb('task_count', '+', param<number>('added')),
          }))
          .where('id', '=', id),
      ),
      addTasks: db.prepare(
        k
          .updateTable('sessions')
          .set((eb) => ({ task_count: eb('task_count', '+', param<number>('added')) }))
          .where('id', '=', id),
      ),
      delete: db.prepare(k.deleteFrom('sessions').where('id', '=', id)),
      // Retention: idle, empty, and not the context of a plan.
      deleteIdle: db.sqlite.prepare(
        `DELETE FROM sessions WHERE id IN (SELECT s.id FROM sessions s WHERE s.updated_at < @before
           AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.context_id = s.id)
           AND s.id NOT IN (SELECT json_extract(doc, '$.contextId') FROM plans WHERE json_extract(doc, '$.contextId') IS NOT NULL)
           ORDER BY s.updated_at LIMIT @limit)`,
      ),
    };
  }

  async deleteIdle(before: string, limit: number): Promise<number> {
    const params = { before: toIsoInstant(before, 'before'), limit: Math.max(0, Math.floor(limit)) };
    return this.db.write(() => this.q.deleteIdle.run(params).changes);
  }

  async create(session: Session): Promise<void> {
    const params = {
      id: session.id,
      owner: session.owner,
      actor: session.actor,
      title: session.title ?? null,
      createdAt: toIsoInstant(session.createdAt, 'session.createdAt'),
      updatedAt: toIsoInstant(session.updatedAt, 'session.updatedAt'),
      taskCount: session.taskCount,
      project: session.project ?? null,
      skills: session.skills ? JSON.stringify(session.skills) : null,
    };
    try {
      await this.db.write(() => this.q.insert.run(params));
    } catch (err) {
      if (isConstraintError(err, 'PRIMARYKEY')) {
        throw new AppError('ALREADY_EXISTS', `Session ${session.id} already exists`, {
          details: { entity: 'session', id: session.id },
        });
      }
      throw err;
    }
  }

  async get(id: string): Promise<Session | undefined> {
    const row = await this.db.exclusive(() => this.q.select.get({ id }));
    return row && toSession(row);
  }

  async list(owner: string, limit: number, after?: SessionCursor): Promise<SessionPage> {
    const n = Math.max(0, Math.floor(limit));
    const k = this.db.kysely;
    const count = k
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner', '=', owner)
      .compile();
    let page = k.selectFrom('sessions').select(COLUMNS).where('owner', '=', owner);
    if (after) page = page.where(olderThan(after));
    const pageQuery = page
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(n + 1)
      .compile();
    return this.db.exclusive(() =>
      this.db.sqlite.transaction(() => {
        const total = this.db.all(count)[0]?.n ?? 0;
        const rows = this.db.all(pageQuery);
        const kept = rows.slice(0, n);
        const last = kept[kept.length - 1];
        const result: SessionPage = { sessions: kept.map(toSession), total };
        if (rows.length > n && last) result.next = { updatedAt: last.updated_at, id: last.id };
        return result;
      })(),
    );
  }

  /** Bumps `updatedAt` (never backwards) and the task count; a missing session is not an error. */
  async touch(id: string, at: string, addedTasks: number): Promise<void> {
    // An unusable timestamp still counts the tasks: the activity happened, only its time is unknown.
    const instant = Number.isNaN(Date.parse(at)) ? undefined : toIsoInstant(at, 'at');
    await this.db.write(() =>
      instant === undefined
        ? this.q.addTasks.run({ id, added: addedTasks })
        : this.q.touch.run({ id, at: instant, added: addedTasks }),
    );
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.write(() => this.q.delete.run({ id }))) > 0;
  }
}

type SessionRow = Pick<SessionsTable, (typeof COLUMNS)[number]>;

function toSession(row: SessionRow): Session {
  const s: Session = {
    id: row.id,
    owner: row.owner,
    actor: row.actor,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    taskCount: row.task_count,
  };
  if (row.title !== null) s.title = row.title;
  if (row.project !== null) s.project = row.project;
  if (row.skills !== null) s.skills = JSON.parse(row.skills) as string[];
  return s;
}
