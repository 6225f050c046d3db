import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { AnyDb } from './migration-db.ts';

export const m0006_push_outbox: Migration = {
  async up(db: AnyDb) {
    // Push deliveries not yet acknowledged by their webhook: at least once, in order per config
    // (event seq), across restarts. A delivered row is deleted; runner_id is the process that
    // delivers it (rows of a dead runner are taken over).
    await db.schema
      .createTable('push_outbox')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('config_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('runner_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('push_outbox_pk', ['task_id', 'config_id', 'seq'])
      .addForeignKeyConstraint('push_outbox_task_fk', ['task_id'], 'tasks', ['id'], (fk) => fk.onDelete('cascade'))
      .execute();
    await db.schema
      .createIndex('push_outbox_runner')
      .on('push_outbox')
      .columns(['runner_id', 'task_id', 'config_id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('push_outbox').ifExists().execute();
  },
};

export const m0007_retention: Migration = {
  async up(db: AnyDb) {
    // Retention walks finished tasks oldest first; a partial index holds only those (they are
    // written once when they finish, so it costs the hot path nothing).
    await sql`CREATE INDEX tasks_terminal_updated ON tasks (updated_at, id) WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')`.execute(
      db,
    );
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('tasks_terminal_updated').ifExists().execute();
  },
};

export const m0008_chat: Migration = {
  async up(db: AnyDb) {
    // A session may be bound to a project (its tools work there) and bring skills of its own.
    await db.schema.alterTable('sessions').addColumn('project', 'text').execute();
    await db.schema.alterTable('sessions').addColumn('skills', 'text').execute();
    // What an LLM turn said to its model and heard back (tool calls and results), so a later turn
    // sees it and a turn waiting for an approval can go on in another process.
    await db.schema
      .createTable('turn_transcripts')
      .addColumn('task_id', 'text', (c) => c.primaryKey().references('tasks.id').onDelete('cascade'))
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('turn_transcripts_context').on('turn_transcripts').columns(['context_id']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('turn_transcripts').ifExists().execute();
    await db.schema.alterTable('sessions').dropColumn('skills').execute();
    await db.schema.alterTable('sessions').dropColumn('project').execute();
  },
};

export const m0009_accounts: Migration = {
  async up(db: AnyDb) {
    // Server mode's users and their API keys; the admin is made on a server's first start.
    await db.schema
      .createTable('users')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('display_name', 'text')
      .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('default_namespace', 'text', (c) => c.notNull())
      .addColumn('external_id', 'text', (c) => c.unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('disabled_at', 'text')
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_name', 'text', (c) => c.notNull().references('users.name').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('revoked_at', 'text')
      .addColumn('last_used_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_user').on('api_keys').columns(['user_name', 'created_at']).execute();
    await db.schema
      .createTable('audit_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('principal', 'text')
      .addColumn('credential', 'text')
      .addColumn('namespace', 'text')
      .addColumn('target', 'text')
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('details', 'text')
      .addColumn('client', 'text')
      .execute();
    await db.schema.createIndex('audit_events_principal').on('audit_events').columns(['principal', 'id']).execute();
    await db.schema.createIndex('audit_events_namespace').on('audit_events').columns(['namespace', 'id']).execute();
    // A local store's view of the server it syncs with: the revision and hash last pulled or pushed.
    await db.schema
      .createTable('sync_state')
      .addColumn('remote', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('synced_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sync_state_pk', ['remote', 'kind', 'name'])
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of ['sync_state', 'audit_events', 'api_keys', 'users']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};

export const m0010_sync: Migration = {
  async up(db: AnyDb) {
    // The local content hash at the last sync: a resource mapped to a path of this machine differs
    // from the server's definition without being a local change.
    await db.schema
      .alterTable('sync_state')
      .addColumn('local_hash', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('sync_state').dropColumn('local_hash').execute();
  },
};
