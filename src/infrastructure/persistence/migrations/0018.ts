import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { type AnyDb, onPostgres } from './migration-db.ts';

export const m0018_model_usage: Migration = {
  async up(db: AnyDb) {
    const text = onPostgres(db) ? sql`text collate "C"` : 'text';
    // Model tokens per user as they are used, one row per model step (chat turns, plan phases,
    // compaction): who sent the message or started the phase, not who started the task, so a
    // follow-up or a plan phase counts toward its own user. 0017 read the tokens from the task
    // snapshots, which hold a task's total (all its senders') and nothing of plans.
    await db.schema
      .createTable('model_usage')
      .addColumn('user_id', text, (c) => c.notNull())
      .addColumn('at', text, (c) => c.notNull())
      .addColumn('tokens', onPostgres(db) ? 'bigint' : 'integer', (c) => c.notNull())
      .execute();
    // The check's one query (a user's tokens since the start of the UTC day) reads this index only.
    await db.schema.createIndex('model_usage_user_at').on('model_usage').columns(['user_id', 'at', 'tokens']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('model_usage').ifExists().execute();
  },
};
