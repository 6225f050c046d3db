import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { type AnyDb, onPostgres } from './migration-db.ts';

export const m0017_usage_limits: Migration = {
  async up(db: AnyDb) {
    const text = onPostgres(db) ? sql`text collate "C"` : 'text';
    // Per-user limits (issue #40) count a user's running turns and model tokens from the task rows:
    // a task's owner is its namespace, so the user who started it is stored beside it (null: a
    // task stored before, or made by the platform). Indexed on this column alone: it never changes
    // after the insert, so status updates (the hot path) do not touch the index.
    await db.schema.alterTable('tasks').addColumn('started_by', text).execute();
    await db.schema.createIndex('tasks_started_by').on('tasks').column('started_by').execute();
    // A namespace's overrides of the server's default limits, as JSON ({requestsPerMinute?, …});
    // they go with the namespace (a namespace made later under the same name starts with none).
    await db.schema
      .createTable('namespace_limits')
      .addColumn('namespace', text, (c) => c.primaryKey().references('namespaces.name').onDelete('cascade'))
      .addColumn('limits', text, (c) => c.notNull())
      .addColumn('updated_at', text, (c) => c.notNull())
      .addColumn('updated_by', text, (c) => c.notNull())
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('namespace_limits').ifExists().execute();
    await db.schema.dropIndex('tasks_started_by').ifExists().execute();
    await db.schema.alterTable('tasks').dropColumn('started_by').execute();
  },
};
