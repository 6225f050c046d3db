import type { Kysely } from 'kysely';
import { AppError } from '../../../domain/errors.ts';
import type { StoredPushConfig } from '../../../application/index.ts';
import type { DB } from '../database-schema.ts';

/*
 * The push_configs table on both engines: each config stored whole as JSON, credentials included.
 * SQLite prepares these builders with param() placeholders; PostgreSQL runs them with values.
 */

/** Puts a config (replacing one of the same task and id). ON CONFLICT … DO UPDATE is spelled the same on both. */
export function upsertPushConfig(k: Kysely<DB>, taskId: string, id: string, config: string) {
  return k
    .insertInto('push_configs')
    .values({ task_id: taskId, id, config })
    .onConflict((oc) => oc.columns(['task_id', 'id']).doUpdateSet((eb) => ({ config: eb.ref('excluded.config') })));
}

export function selectPushConfig(k: Kysely<DB>, taskId: string, id: string) {
  return k.selectFrom('push_configs').select('config').where('task_id', '=', taskId).where('id', '=', id);
}

export function listPushConfigs(k: Kysely<DB>, taskId: string) {
  return k.selectFrom('push_configs').select('config').where('task_id', '=', taskId).orderBy('id');
}

export function deletePushConfig(k: Kysely<DB>, taskId: string, id: string) {
  return k.deleteFrom('push_configs').where('task_id', '=', taskId).where('id', '=', id);
}

export function deletePushConfigs(k: Kysely<DB>, taskId: string) {
  return k.deleteFrom('push_configs').where('task_id', '=', taskId);
}

export function toPushConfig(row: { config: string }): StoredPushConfig {
  return JSON.parse(row.config) as StoredPushConfig;
}

/** A config put for a task that does not exist (the foreign key refused it). */
export function pushConfigTaskMissing(taskId: string): AppError {
  return new AppError('TASK_NOT_FOUND', `Task ${taskId} was not found`, { details: { taskId } });
}
