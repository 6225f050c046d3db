/**
 * Rows put straight into a test database (either engine), for repository suites that need a task
 * or a plan to exist without the repository that owns it.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../src/infrastructure/persistence/database-schema.ts';
import type { OpenedEngine } from './engines.ts';
import { taskRow } from './task-rows.ts';

export function kyselyOf(e: OpenedEngine): Kysely<DB> {
  const k = e.pg?.kysely ?? e.sqlite?.kysely;
  if (!k) throw new Error('no database opened');
  return k;
}

/** A working task (its snapshot is a stub) in a context. */
export async function insertTaskRow(e: OpenedEngine, id: string, contextId = 'c', owner = 'alice'): Promise<void> {
  await kyselyOf(e)
    .insertInto('tasks')
    .values({ ...taskRow(id), context_id: contextId, owner })
    .execute();
}

/** A plan row whose document is `doc` (plus its id). */
export async function insertPlanRow(e: OpenedEngine, id: string, doc: object, owner = 'alice'): Promise<void> {
  const at = '2026-03-01T10:00:00.000Z';
  await kyselyOf(e)
    .insertInto('plans')
    .values({
      id,
      owner,
      action: 'a',
      phase: 'strategize',
      state: 'complete',
      created_at: at,
      updated_at: at,
      doc: JSON.stringify({ ...doc, id }),
    })
    .execute();
}
