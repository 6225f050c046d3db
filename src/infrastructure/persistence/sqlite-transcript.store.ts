import type { Transcript, TranscriptStore } from '../../application/index.js';
import { param, type SqliteDatabase } from './database.js';

/** LLM turn transcripts in SQLite, one row per task (deleted with the task). */
export class SqliteTranscriptStore implements TranscriptStore {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    const k = db.kysely;
    this.q = {
      select: db.prepare(k.selectFrom('turn_transcripts').select('doc').where('task_id', '=', param<string>('taskId'))),
      upsert: db.prepare(
        k
          .insertInto('turn_transcripts')
          .values({
            task_id: param('taskId'),
            context_id: param('contextId'),
            doc: param('doc'),
            updated_at: param('at'),
          })
          .onConflict((oc) =>
            oc
              .column('task_id')
              .doUpdateSet((eb) => ({ doc: eb.ref('excluded.doc'), updated_at: eb.ref('excluded.updated_at') })),
          ),
      ),
      byContext: db.prepare(
        k
          .selectFrom('turn_transcripts')
          .select(['task_id', 'doc'])
          .where('context_id', '=', param<string>('contextId')),
      ),
    };
  }

  async get(taskId: string): Promise<Transcript | undefined> {
    const row = await this.db.exclusive(() => this.q.select.get({ taskId }));
    return row ? (JSON.parse(row.doc) as Transcript) : undefined;
  }

  async save(taskId: string, contextId: string, transcript: Transcript): Promise<void> {
    const doc = JSON.stringify(transcript);
    await this.db.write(() => this.q.upsert.run({ taskId, contextId, doc, at: new Date().toISOString() }));
  }

  async forContext(contextId: string, taskIds: readonly string[]): Promise<Map<string, Transcript>> {
    const wanted = new Set(taskIds);
    const rows = await this.db.exclusive(() => this.q.byContext.all({ contextId }));
    const out = new Map<string, Transcript>();
    for (const r of rows) if (wanted.has(r.task_id)) out.set(r.task_id, JSON.parse(r.doc) as Transcript);
    return out;
  }
}
