import { sql, type RawBuilder } from 'kysely';
import { activityInstant, insertSession, sessionExists, touchSession, addSessionTasks } from '../rows/session.rows.ts';
import type { SessionRow } from '../rows/session.rows.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';

type Settle = { resolve(): void; reject(err: unknown): void };

/** A session's bookkeeping waiting for a statement: its new row, tasks counted, latest activity. */
export interface SessionWork {
  id: string;
  insert?: SessionRow;
  added: number;
  /** The latest activity instant (moves `updated_at` forward only). */
  at?: string | undefined;
  settles: Settle[];
}

/** What can carry a session's work in its own statement: a task write not yet started. */
export interface SessionWorkCarrier {
  /** The work that rides on the queued write of a task in `sessionId`, made when absent; undefined when none is queued. */
  workFor(sessionId: string): SessionWork | undefined;
}

const shared = new WeakMap<PgDatabase, PgSessionWrites>();

/**
 * The session rows a send writes — the new session, the task counted into it, the activity of a
 * settled turn — folded into the statements of the task's own writes (a CTE), instead of one
 * round trip each (issue #40, point 7): a new session's row waits until the next turn of the
 * event loop for its task's create to take it, and a touch joins a write of a task of that
 * session still queued. The plain fallback: work that no task write takes goes in its own
 * statement, as before; a carrier that fails on a constraint hands the work back to run alone.
 * One per database, shared by its session and task repositories ({@link PgSessionWrites.of}).
 */
export class PgSessionWrites {
  private readonly db: PgDatabase;
  private readonly pending = new Map<string, SessionWork>();
  private readonly carriers = new Set<SessionWorkCarrier>();

  private constructor(db: PgDatabase) {
    this.db = db;
  }

  static of(db: PgDatabase): PgSessionWrites {
    let w = shared.get(db);
    if (!w) shared.set(db, (w = new PgSessionWrites(db)));
    return w;
  }

  addCarrier(c: SessionWorkCarrier): void {
    this.carriers.add(c);
  }

  /** A new session's row: with its first task's create when one comes this turn of the event loop, else alone. */
  insert(row: SessionRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const work: SessionWork = { id: row.id, insert: row, added: 0, settles: [{ resolve, reject }] };
      this.pending.set(row.id, work);
      setImmediate(() => {
        if (this.pending.get(row.id) !== work) return;
        this.pending.delete(row.id);
        void this.alone(work);
      });
    });
  }

  /** Counts `added` tasks into the session and moves its activity to `at` (never backwards). */
  touch(id: string, at: string, added: number): Promise<void> {
    const instant = activityInstant(at);
    return new Promise<void>((resolve, reject) => {
      let work = this.pending.get(id);
      for (const c of this.carriers) work ??= c.workFor(id);
      const settle = { resolve, reject };
      if (work) return void merge(work, instant, added, settle);
      void this.alone({ id, added, at: instant, settles: [settle] });
    });
  }

  /** The pending work of a session (its new row), taken by a task write of that session. */
  claim(id: string): SessionWork | undefined {
    const work = this.pending.get(id);
    if (work) this.pending.delete(id);
    return work;
  }

  /** The work as a data-modifying CTE of a task's statement. */
  cte(name: string, work: SessionWork): RawBuilder<unknown> {
    return sql`, ${sql.id(name)} as (${statement(work)})`;
  }

  /** Runs the work in its own statement and settles it. */
  async alone(work: SessionWork): Promise<void> {
    try {
      await this.db.run(async (k) => {
        if (work.insert) await insertSession(k, rowOf(work)).execute();
        else if (work.at === undefined) await addSessionTasks(k, work.id, work.added).execute();
        else await touchSession(k, work.id, work.at, work.added).execute();
      });
    } catch (err) {
      const failure = work.insert && isPgConstraintError(err, 'unique') ? sessionExists(work.id) : err;
      for (const s of work.settles) s.reject(failure);
      return;
    }
    for (const s of work.settles) s.resolve();
  }
}

/** Adds a touch to queued work. */
export function merge(work: SessionWork, at: string | undefined, added: number, settle: Settle): void {
  work.added += added;
  if (at !== undefined && (work.at === undefined || at > work.at)) work.at = at;
  work.settles.push(settle);
}

/** A new row with the touches that came before it was written. */
function rowOf(work: SessionWork): SessionRow {
  const row = work.insert as SessionRow;
  const at = work.at !== undefined && work.at > row.updated_at ? work.at : row.updated_at;
  return { ...row, task_count: row.task_count + work.added, updated_at: at };
}

function statement(work: SessionWork): RawBuilder<unknown> {
  if (work.insert) {
    const row = rowOf(work);
    const cols = Object.keys(row) as (keyof SessionRow)[];
    return sql`insert into sessions (${sql.join(cols.map((c) => sql.id(c)))}) values (${sql.join(cols.map((c) => row[c]))})`;
  }
  const at = work.at;
  const moved =
    at === undefined ? sql`` : sql`updated_at = case when updated_at < ${at} then ${at} else updated_at end, `;
  return sql`update sessions set ${moved}task_count = task_count + ${work.added} where id = ${work.id}`;
}
