import type { TurnChangeRecord, TurnChangeRepository } from '../../../application/index.ts';
import type { TurnChangesTable } from '../database-schema.ts';
import type { SqlRunner } from './sql-runner.ts';

/** The turn_changes table (SQLite and PostgreSQL alike). */
export class TurnChangeTableStore implements TurnChangeRepository {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async get(taskId: string, root: string): Promise<TurnChangeRecord | undefined> {
    const row = await this.db.run((k) =>
      k
        .selectFrom('turn_changes')
        .selectAll()
        .where('task_id', '=', taskId)
        .where('root', '=', root)
        .executeTakeFirst(),
    );
    return row && toRecord(row);
  }

  async create(r: TurnChangeRecord): Promise<void> {
    await this.db.run((k) =>
      k
        .insertInto('turn_changes')
        .values({
          task_id: r.taskId,
          session_id: r.sessionId,
          root: r.root,
          before_snapshot: r.before,
          after_snapshot: r.after ?? null,
          files: JSON.stringify(r.files),
          created_at: r.createdAt,
          undone_at: r.undoneAt ?? null,
        })
        .onConflict((oc) => oc.columns(['task_id', 'root']).doNothing())
        .execute(),
    );
  }

  async recordAfter(taskId: string, root: string, after: string, files: readonly string[]): Promise<void> {
    await this.db.run((k) =>
      k
        .updateTable('turn_changes')
        .set({ after_snapshot: after, files: JSON.stringify(files) })
        .where('task_id', '=', taskId)
        .where('root', '=', root)
        .execute(),
    );
  }

  async listBySession(sessionId: string): Promise<TurnChangeRecord[]> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('turn_changes')
        .selectAll()
        .where('session_id', '=', sessionId)
        .orderBy('created_at')
        .orderBy('task_id')
        .orderBy('root')
        .execute(),
    );
    return rows.map(toRecord);
  }

  async markUndone(records: readonly Pick<TurnChangeRecord, 'taskId' | 'root'>[], at: string): Promise<void> {
    if (records.length === 0) return;
    await this.db.transaction(async (trx) => {
      for (const r of records)
        await trx
          .updateTable('turn_changes')
          .set({ undone_at: at })
          .where('task_id', '=', r.taskId)
          .where('root', '=', r.root)
          .execute();
    });
  }

  async deleteBySession(sessionId: string): Promise<number> {
    const r = await this.db.run((k) =>
      k.deleteFrom('turn_changes').where('session_id', '=', sessionId).executeTakeFirst(),
    );
    return Number(r.numDeletedRows);
  }
}

function toRecord(row: TurnChangesTable): TurnChangeRecord {
  const r: TurnChangeRecord = {
    taskId: row.task_id,
    sessionId: row.session_id,
    root: row.root,
    before: row.before_snapshot,
    files: JSON.parse(row.files) as string[],
    createdAt: row.created_at,
  };
  if (row.after_snapshot !== null) r.after = row.after_snapshot;
  if (row.undone_at !== null) r.undoneAt = row.undone_at;
  return r;
}
