/* What the SQLite and PostgreSQL transcript stores share: the upsert and the row mapping. */
import type { Kysely } from 'kysely';
import type { Transcript } from '../../../application/index.ts';
import type { DB } from '../database-schema.ts';

/** Stores (replaces) a task's transcript. */
export function upsertTranscriptQuery(
  k: Kysely<DB>,
  values: { taskId: string; contextId: string; doc: string; at: string },
) {
  return k
    .insertInto('turn_transcripts')
    .values({ task_id: values.taskId, context_id: values.contextId, doc: values.doc, updated_at: values.at })
    .onConflict((oc) =>
      oc
        .column('task_id')
        .doUpdateSet((eb) => ({ doc: eb.ref('excluded.doc'), updated_at: eb.ref('excluded.updated_at') })),
    );
}

export function transcriptQuery(k: Kysely<DB>, taskId: string) {
  return k.selectFrom('turn_transcripts').select('doc').where('task_id', '=', taskId);
}

export function contextTranscriptsQuery(k: Kysely<DB>, contextId: string) {
  return k.selectFrom('turn_transcripts').select(['task_id', 'doc']).where('context_id', '=', contextId);
}

/** The wanted tasks' transcripts among a context's rows, by task id. */
export function pickTranscripts(
  rows: readonly { task_id: string; doc: string }[],
  taskIds: readonly string[],
): Map<string, Transcript> {
  const wanted = new Set(taskIds);
  const out = new Map<string, Transcript>();
  for (const r of rows) if (wanted.has(r.task_id)) out.set(r.task_id, JSON.parse(r.doc) as Transcript);
  return out;
}
