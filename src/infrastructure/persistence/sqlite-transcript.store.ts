import type { Transcript, TranscriptStore } from '../../application/index.ts';
import { param, type SqliteDatabase } from './database.ts';
import {
  contextTranscriptsQuery,
  pickTranscripts,
  transcriptQuery,
  upsertTranscriptQuery,
} from './rows/transcript.rows.ts';

/** LLM turn transcripts in SQLite, one row per task (deleted with the task). */
export class SqliteTranscriptStore implements TranscriptStore {
  private readonly q;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.db = db;
    const k = db.kysely;
    this.q = {
      select: db.prepare(transcriptQuery(k, param('taskId'))),
      upsert: db.prepare(
        upsertTranscriptQuery(k, {
          taskId: param('taskId'),
          contextId: param('contextId'),
          doc: param('doc'),
          at: param('at'),
        }),
      ),
      byContext: db.prepare(contextTranscriptsQuery(k, param('contextId'))),
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
    const rows = await this.db.exclusive(() => this.q.byContext.all({ contextId }));
    return pickTranscripts(rows, taskIds);
  }
}
