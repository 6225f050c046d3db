import { sql, type Kysely } from 'kysely';
import type { OutboxEntry } from '../../../application/index.ts';
import type { DB, PushOutboxTable } from '../database-schema.ts';

/*
 * The push outbox's queries, shared by both engines: SQLite prepares them with param()
 * placeholders for values, PostgreSQL executes them with the values themselves.
 */

/** One entry to queue (a re-queued event, the same seq, keeps its first entry and its attempt count). */
export function insertOutboxEntry(
  k: Kysely<DB>,
  v: { taskId: string; configId: string; seq: number; payload: string; at: string; runnerId: string },
) {
  return k
    .insertInto('push_outbox')
    .values({
      task_id: v.taskId,
      config_id: v.configId,
      seq: v.seq,
      payload: v.payload,
      attempts: sql.lit(0),
      next_attempt_at: v.at,
      runner_id: v.runnerId,
      created_at: v.at,
    })
    .onConflict((oc) => oc.columns(['task_id', 'config_id', 'seq']).doNothing());
}

export type OutboxRow = Pick<
  PushOutboxTable,
  'task_id' | 'config_id' | 'seq' | 'payload' | 'attempts' | 'next_attempt_at' | 'last_error'
>;

/** A config's first pending entry (lowest seq). */
export function nextOutboxEntry(k: Kysely<DB>, taskId: string, configId: string) {
  return k
    .selectFrom('push_outbox')
    .select(['task_id', 'config_id', 'seq', 'payload', 'attempts', 'next_attempt_at', 'last_error'])
    .where('task_id', '=', taskId)
    .where('config_id', '=', configId)
    .orderBy('seq')
    .limit(sql.lit(1));
}

export function removeOutboxEntry(k: Kysely<DB>, taskId: string, configId: string, seq: number) {
  return k
    .deleteFrom('push_outbox')
    .where('task_id', '=', taskId)
    .where('config_id', '=', configId)
    .where('seq', '=', seq);
}

export function retryOutboxEntry(
  k: Kysely<DB>,
  v: { taskId: string; configId: string; seq: number; attempts: number; at: string; error: string },
) {
  return k
    .updateTable('push_outbox')
    .set({ attempts: v.attempts, next_attempt_at: v.at, last_error: v.error })
    .where('task_id', '=', v.taskId)
    .where('config_id', '=', v.configId)
    .where('seq', '=', v.seq);
}

export function removeOutboxTarget(k: Kysely<DB>, taskId: string, configId: string) {
  return k.deleteFrom('push_outbox').where('task_id', '=', taskId).where('config_id', '=', configId);
}

/** The runners that own entries. */
export function outboxRunners(k: Kysely<DB>) {
  return k.selectFrom('push_outbox').select('runner_id').distinct();
}

/** Takes over the entries of `from` (null: unowned ones); taken over entries are due at once. */
export function takeOverOutbox(k: Kysely<DB>, self: string, from: string | null, at: string) {
  const q = k.updateTable('push_outbox').set({ runner_id: self, next_attempt_at: at });
  return from === null ? q.where('runner_id', 'is', sql.lit(null)) : q.where('runner_id', '=', from);
}

/** The targets with entries of `self`. */
export function outboxTargetsOf(k: Kysely<DB>, self: string) {
  return k.selectFrom('push_outbox').select(['task_id', 'config_id']).distinct().where('runner_id', '=', self);
}

export function toOutboxEntry(row: OutboxRow): OutboxEntry {
  return {
    taskId: row.task_id,
    configId: row.config_id,
    seq: row.seq,
    payload: row.payload,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
  };
}

/** A stored error message is capped (a webhook's error body could be large). */
export const LAST_ERROR_MAX = 1000;
