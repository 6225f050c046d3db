import type { Transcript, TranscriptStore } from '../../../application/index.ts';
import {
  contextTranscriptsQuery,
  pickTranscripts,
  transcriptQuery,
  upsertTranscriptQuery,
} from '../rows/transcript.rows.ts';
import type { PgDatabase } from './pg-database.ts';

/** LLM turn transcripts in PostgreSQL, one row per task (deleted with the task by its foreign key). */
export class PgTranscriptStore implements TranscriptStore {
  private readonly db: PgDatabase;

  constructor(db: PgDatabase) {
    this.db = db;
  }

  async get(taskId: string): Promise<Transcript | undefined> {
    const row = await this.db.run((k) => transcriptQuery(k, taskId).executeTakeFirst());
    return row ? (JSON.parse(row.doc) as Transcript) : undefined;
  }

  /** One statement: a concurrent save of the same task from another instance cannot fail it. */
  async save(taskId: string, contextId: string, transcript: Transcript): Promise<void> {
    const doc = JSON.stringify(transcript);
    await this.db.run((k) =>
      upsertTranscriptQuery(k, { taskId, contextId, doc, at: new Date().toISOString() }).execute(),
    );
  }

  async forContext(contextId: string, taskIds: readonly string[]): Promise<Map<string, Transcript>> {
    if (taskIds.length === 0) return new Map();
    const rows = await this.db.run((k) =>
      contextTranscriptsQuery(k, contextId)
        .where('task_id', 'in', [...taskIds])
        .execute(),
    );
    return pickTranscripts(rows, taskIds);
  }
}
