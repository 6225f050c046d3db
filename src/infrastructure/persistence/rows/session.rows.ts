import { sql, type Kysely } from 'kysely';
import { idStartsWith } from './id-prefix.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Session } from '../../../domain/session.ts';
import type { SessionCursor, SessionPage } from '../../../application/index.ts';
import { olderThan } from '../database.ts';
import { toIsoInstant } from '../iso-instant.ts';
import { type DB, type SessionsTable } from '../database-schema.ts';

/*
 * The sessions table on both engines: row mapping and the query shapes. The SQLite repository
 * prepares these builders once with param() placeholders; the PostgreSQL one runs them with values.
 */

export const SESSION_COLUMNS = [
  'id',
  'owner',
  'actor',
  'title',
  'created_at',
  'updated_at',
  'task_count',
  'project',
  'skills',
  'forked_from',
  'context',
] as const;

export type SessionRow = Pick<SessionsTable, (typeof SESSION_COLUMNS)[number]>;

export function toSession(row: SessionRow): Session {
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
  if (row.forked_from !== null) s.forkedFrom = JSON.parse(row.forked_from) as NonNullable<Session['forkedFrom']>;
  // A value this version does not know (a newer one wrote it) reads as the default.
  if (row.context === 'full' || row.context === 'map') s.context = row.context;
  return s;
}

/** The row of a new session (timestamps normalised so they sort as instants). */
export function sessionRow(session: Session): SessionRow {
  return {
    id: session.id,
    owner: session.owner,
    actor: session.actor,
    title: session.title ?? null,
    created_at: toIsoInstant(session.createdAt, 'session.createdAt'),
    updated_at: toIsoInstant(session.updatedAt, 'session.updatedAt'),
    task_count: session.taskCount,
    project: session.project ?? null,
    skills: session.skills ? JSON.stringify(session.skills) : null,
    forked_from: session.forkedFrom ? JSON.stringify(session.forkedFrom) : null,
    context: session.context ?? null,
  };
}

export function sessionExists(id: string): AppError {
  return new AppError('ALREADY_EXISTS', `Session ${id} already exists`, { details: { entity: 'session', id } });
}

export function insertSession(k: Kysely<DB>, row: SessionRow) {
  return k.insertInto('sessions').values(row);
}

export function selectSession(k: Kysely<DB>, id: string) {
  return k.selectFrom('sessions').select(SESSION_COLUMNS).where('id', '=', id);
}

/** The time a touch moves `updatedAt` to, or undefined when `at` is no usable time (tasks still count). */
export function activityInstant(at: string): string | undefined {
  return Number.isNaN(Date.parse(at)) ? undefined : toIsoInstant(at, 'at');
}

/** One statement: `updatedAt` moves forward only, the task count grows (atomic under concurrency). */
export function touchSession(k: Kysely<DB>, id: string, at: string, added: number) {
  // CASE rather than max()/greatest(), which differ between SQLite and PostgreSQL.
  return k
    .updateTable('sessions')
    .set((eb) => ({
      updated_at: eb.case().when('updated_at', '<', at).then(at).else(eb.ref('updated_at')).end(),
      task_count: eb('task_count', '+', added),
    }))
    .where('id', '=', id);
}

/** A session's settings rewritten (session/update); `updatedAt` moves forward only, as with a touch. */
export function updateSessionSettings(
  k: Kysely<DB>,
  id: string,
  row: Pick<SessionRow, 'actor' | 'skills' | 'context'>,
  at: string,
) {
  return k
    .updateTable('sessions')
    .set((eb) => ({
      actor: row.actor,
      skills: row.skills,
      context: row.context,
      updated_at: eb.case().when('updated_at', '<', at).then(at).else(eb.ref('updated_at')).end(),
    }))
    .where('id', '=', id);
}

/** The settings' columns of a session (session/update). */
export function settingsRow(
  s: Pick<Session, 'actor' | 'skills' | 'context'>,
): Pick<SessionRow, 'actor' | 'skills' | 'context'> {
  return {
    actor: s.actor,
    skills: s.skills && s.skills.length > 0 ? JSON.stringify(s.skills) : null,
    context: s.context ?? null,
  };
}

export function addSessionTasks(k: Kysely<DB>, id: string, added: number) {
  return k
    .updateTable('sessions')
    .set((eb) => ({ task_count: eb('task_count', '+', added) }))
    .where('id', '=', id);
}

export function deleteSession(k: Kysely<DB>, id: string) {
  return k.deleteFrom('sessions').where('id', '=', id);
}

/**
 * Retention: at most `limit` sessions idle since before `before`, empty, and not the context of a
 * plan. On PostgreSQL the candidates are locked `skip locked`: a session being touched (a task
 * starting in it) is left for the next sweep.
 */
export function deleteIdleSessions(k: Kysely<DB>, before: string, limit: number, engine: 'sqlite' | 'postgresql') {
  const contextId =
    engine === 'postgresql' ? sql<string>`(doc::jsonb ->> 'contextId')` : sql<string>`json_extract(doc, '$.contextId')`;
  return k.deleteFrom('sessions').where('id', 'in', (eb) => {
    const candidates = eb
      .selectFrom('sessions as s')
      .select('s.id')
      .where('s.updated_at', '<', before)
      .where((w) => w.not(w.exists(w.selectFrom('tasks as t').select('t.id').whereRef('t.context_id', '=', 's.id'))))
      .where('s.id', 'not in', eb.selectFrom('plans').select(contextId.as('c')).where(contextId, 'is not', null))
      .orderBy('s.updated_at')
      .limit(limit);
    return engine === 'postgresql' ? candidates.forUpdate().skipLocked() : candidates;
  });
}

/** The count and the page (one more row than asked, to know whether more follow) of a listing. */
export function listSessions(
  k: Kysely<DB>,
  owner: string,
  limit: number,
  after: SessionCursor | undefined,
  project?: string,
) {
  let count = k
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner', '=', owner);
  let page = k.selectFrom('sessions').select(SESSION_COLUMNS).where('owner', '=', owner);
  if (project !== undefined) {
    count = count.where('project', '=', project);
    page = page.where('project', '=', project);
  }
  if (after) page = page.where(olderThan(after));
  return {
    count,
    page: page
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1),
  };
}

/** Up to `limit` of the owner's sessions whose id starts with `prefix`, most recently active first. */
export function sessionsByIdPrefix(k: Kysely<DB>, owner: string, prefix: string, limit: number) {
  return k
    .selectFrom('sessions')
    .select(SESSION_COLUMNS)
    .where('owner', '=', owner)
    .where(idStartsWith('id', prefix))
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
}

export function toSessionPage(rows: SessionRow[], limit: number, total: number): SessionPage {
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  const result: SessionPage = { sessions: kept.map(toSession), total };
  if (rows.length > limit && last) result.next = { updatedAt: last.updated_at, id: last.id };
  return result;
}

export function pageLimit(limit: number): number {
  return Math.max(0, Math.floor(limit));
}
