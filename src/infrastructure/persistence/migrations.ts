import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';

/*
 * Migrations are written with Kysely's schema builder only, so the same list runs on SQLite and on
 * PostgreSQL. Timestamps are ISO 8601 strings in `toISOString()` form (fixed width, UTC), which sort
 * as instants under any collation; JSON documents are text. Never edit a migration that has
 * shipped: add the next one.
 */

// Migrations see the database as it was when they were written, not as `DB` describes it today.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const m0001_initial: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('title', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('task_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('sessions_owner_updated')
      .on('sessions')
      .columns(['owner', 'updated_at desc', 'id desc'])
      .execute();

    await db.schema
      .createTable('tasks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('snapshot', 'text', (c) => c.notNull())
      .execute();
    // ListTasks: every filter combination starts with the owner and pages on (updated_at, id).
    await db.schema
      .createIndex('tasks_owner_updated')
      .on('tasks')
      .columns(['owner', 'updated_at desc', 'id desc'])
      .execute();
    await db.schema
      .createIndex('tasks_owner_context_updated')
      .on('tasks')
      .columns(['owner', 'context_id', 'updated_at desc', 'id desc'])
      .execute();
    await db.schema
      .createIndex('tasks_owner_state_updated')
      .on('tasks')
      .columns(['owner', 'state', 'updated_at desc', 'id desc'])
      .execute();
    // A session's turns, and deleting a session's tasks.
    await db.schema.createIndex('tasks_context_created').on('tasks').columns(['context_id', 'created_at']).execute();

    await db.schema
      .createTable('task_events')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_events_pk', ['task_id', 'seq'])
      .addForeignKeyConstraint('task_events_task_fk', ['task_id'], 'tasks', ['id'], (fk) => fk.onDelete('cascade'))
      .execute();

    await db.schema
      .createTable('push_configs')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('push_configs_pk', ['task_id', 'id'])
      .addForeignKeyConstraint('push_configs_task_fk', ['task_id'], 'tasks', ['id'], (fk) => fk.onDelete('cascade'))
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of ['push_configs', 'task_events', 'tasks', 'sessions']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};

const m0002_registries: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('registry_entities')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('namespace', 'text', (c) => c.notNull())
      // The kind's filterable field: resource type, tool source, actor provider.
      .addColumn('type_field', 'text')
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('registry_entities_pk', ['kind', 'name'])
      .execute();
    await db.schema
      .createIndex('registry_entities_kind_ns_name')
      .on('registry_entities')
      .columns(['kind', 'namespace', 'name'])
      .execute();

    await db.schema
      .createTable('registry_refs')
      .addColumn('from_kind', 'text', (c) => c.notNull())
      .addColumn('from_name', 'text', (c) => c.notNull())
      .addColumn('to_kind', 'text', (c) => c.notNull())
      .addColumn('to_name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('registry_refs_pk', ['from_kind', 'from_name', 'to_kind', 'to_name'])
      .execute();
    await db.schema.createIndex('registry_refs_to').on('registry_refs').columns(['to_kind', 'to_name']).execute();

    await db.schema
      .createTable('namespaces')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('namespace_members')
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('principal', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('added_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('namespace_members_pk', ['namespace', 'principal'])
      .addForeignKeyConstraint('namespace_members_ns_fk', ['namespace'], 'namespaces', ['name'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('namespace_members_principal')
      .on('namespace_members')
      .columns(['principal', 'namespace'])
      .execute();

    // `local` belongs to the local user (the principal of local mode and of the server token).
    const at = new Date().toISOString();
    await db.insertInto('namespaces').values({ name: 'local', owner: 'local', created_at: at }).execute();
    await db
      .insertInto('namespace_members')
      .values({ namespace: 'local', principal: 'local', role: 'owner', added_at: at })
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of ['namespace_members', 'namespaces', 'registry_refs', 'registry_entities']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};

const m0003_plans: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('plans')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('plans_owner_created')
      .on('plans')
      .columns(['owner', 'created_at desc', 'id desc'])
      .execute();

    // Decisions, checkpoints and tool calls of a plan, in the order they happened.
    await db.schema
      .createTable('plan_records')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('plan_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('plan_records_pk', ['kind', 'id'])
      .addForeignKeyConstraint('plan_records_plan_fk', ['plan_id'], 'plans', ['id'], (fk) => fk.onDelete('cascade'))
      .execute();
    await db.schema.createIndex('plan_records_plan').on('plan_records').columns(['plan_id', 'kind', 'id']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('plan_records').ifExists().execute();
    await db.schema.dropTable('plans').ifExists().execute();
  },
};

const m0004_task_counts: Migration = {
  async up(db: AnyDb) {
    // ListTasks reports totalSize; COUNT(*) over an owner's tasks grew with the store (tens of ms at
    // a million tasks), so the repository keeps the counts it needs: per owner (context_id '') and
    // per owner and context. Other filter combinations still count the rows.
    await db.schema
      .createTable('task_counts')
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_counts_pk', ['owner', 'context_id'])
      .execute();
    await backfillTaskCounts(db);
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('task_counts').ifExists().execute();
  },
};

const m0005_message_keys_and_runners: Migration = {
  async up(db: AnyDb) {
    // Idempotent sends (SendMessage / SendStreamingMessage): the messageId that started a task and a
    // hash of its content are stored on the task row, under a unique index per owner, so that a
    // concurrent second send of the same message cannot create a second task, the key costs one
    // index entry, and it goes when the task goes.
    await db.schema.alterTable('tasks').addColumn('message_id', 'text').execute();
    await db.schema.alterTable('tasks').addColumn('message_hash', 'text').execute();
    await db.schema
      .createIndex('tasks_owner_message')
      .unique()
      .on('tasks')
      .columns(['owner', 'message_id'])
      .where(sql.ref('message_id'), 'is not', sql.lit(null))
      .execute();
    // Follow-up messages on an existing task (the rarer case) have their keys here, deleted with the task.
    await db.schema
      .createTable('message_keys')
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_keys_pk', ['owner', 'message_id'])
      .addForeignKeyConstraint('message_keys_task_fk', ['task_id'], 'tasks', ['id'], (fk) => fk.onDelete('cascade'))
      .execute();
    await db.schema.createIndex('message_keys_task').on('message_keys').column('task_id').execute();

    // Which process runs what: every agent process holds a lease row, renewed while it lives; a
    // task names the runner that runs its turn (cleared when a turn ends leaving it working). At
    // start, and periodically, running tasks whose runner is gone are settled.
    await db.schema
      .createTable('runners')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'text', (c) => c.notNull())
      .execute();
    // Not indexed (an index here was a measurable cost on every send): running tasks are found per
    // owner through tasks_owner_state_updated, a few times a minute.
    await db.schema.alterTable('tasks').addColumn('runner_id', 'text').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tasks').dropColumn('runner_id').execute();
    await db.schema.dropTable('runners').ifExists().execute();
    await db.schema.dropTable('message_keys').ifExists().execute();
    await db.schema.dropIndex('tasks_owner_message').ifExists().execute();
    await db.schema.alterTable('tasks').dropColumn('message_hash').execute();
    await db.schema.alterTable('tasks').dropColumn('message_id').execute();
  },
};

const m0006_push_outbox: Migration = {
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

/** Rebuilds task_counts from the task rows (the migration, and stores seeded behind the repository's back). */
export async function backfillTaskCounts(db: AnyDb): Promise<void> {
  await db.deleteFrom('task_counts').execute();
  await db
    .insertInto('task_counts')
    .columns(['owner', 'context_id', 'n'])
    .expression(
      db
        .selectFrom('tasks')
        .select(['owner', sql.lit('').as('context_id'), (eb) => eb.fn.countAll().as('n')])
        .groupBy('owner'),
    )
    .execute();
  await db
    .insertInto('task_counts')
    .columns(['owner', 'context_id', 'n'])
    .expression(
      db
        .selectFrom('tasks')
        .select(['owner', 'context_id', (eb) => eb.fn.countAll().as('n')])
        .groupBy(['owner', 'context_id']),
    )
    .execute();
}

const m0007_retention: Migration = {
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

const m0008_chat: Migration = {
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

const m0009_accounts: Migration = {
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

const m0010_sync: Migration = {
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

/** True when the migration runs on PostgreSQL (the few steps that must differ ask). */
function onPostgres(db: AnyDb): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

const m0011_postgres_collation: Migration = {
  async up(db: AnyDb) {
    // SQLite compares text byte by byte; PostgreSQL by the database's locale, which may ignore case
    // and punctuation. Keys, names, timestamps and paging cursors must compare the same on both
    // engines, so on PostgreSQL every text column of ours uses the byte-order "C" collation.
    if (!onPostgres(db)) return;
    const cols = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and data_type = 'text' and table_name not like 'kysely_%'
      order by table_name, column_name`.execute(db);
    for (const { table_name, column_name } of cols.rows) {
      await sql`alter table ${sql.table(table_name)} alter column ${sql.ref(column_name)} type text collate "C"`.execute(
        db,
      );
    }
  },
  async down() {},
};

const m0012_session_forks: Migration = {
  async up(db: AnyDb) {
    // A forked session names the session (and the last turn) it was copied from.
    await db.schema
      .alterTable('sessions')
      .addColumn('forked_from', onPostgres(db) ? sql`text collate "C"` : 'text')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('sessions').dropColumn('forked_from').execute();
  },
};

const m0013_grants_and_secrets: Migration = {
  async up(db: AnyDb) {
    const text = onPostgres(db) ? sql`text collate "C"` : 'text';
    // What a server administrator granted a namespace (issue #35): one row per capability; `paths`
    // is a JSON array of host directories (host-path only; null: any path).
    await db.schema
      .createTable('namespace_grants')
      .addColumn('namespace', text, (c) => c.notNull())
      .addColumn('capability', text, (c) => c.notNull())
      .addColumn('paths', text)
      .addColumn('granted_by', text, (c) => c.notNull())
      .addColumn('granted_at', text, (c) => c.notNull())
      .addPrimaryKeyConstraint('namespace_grants_pk', ['namespace', 'capability'])
      .addForeignKeyConstraint('namespace_grants_ns_fk', ['namespace'], 'namespaces', ['name'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    // A namespace's secrets, encrypted with the server's key (never stored or returned in clear).
    await db.schema
      .createTable('namespace_secrets')
      .addColumn('namespace', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('ciphertext', text, (c) => c.notNull())
      .addColumn('created_by', text, (c) => c.notNull())
      .addColumn('created_at', text, (c) => c.notNull())
      .addColumn('updated_at', text, (c) => c.notNull())
      .addPrimaryKeyConstraint('namespace_secrets_pk', ['namespace', 'name'])
      .addForeignKeyConstraint('namespace_secrets_ns_fk', ['namespace'], 'namespaces', ['name'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('namespace_secrets').ifExists().execute();
    await db.schema.dropTable('namespace_grants').ifExists().execute();
  },
};

const m0014_turn_changes: Migration = {
  async up(db: AnyDb) {
    const text = onPostgres(db) ? sql`text collate "C"` : 'text';
    // The undo history of chat turns (issue #37): the snapshots of the shadow history around each
    // turn's writes, and the files it changed. No foreign keys: the record is made at the turn's
    // first write, which may come before its task's row is committed; a session's go with it.
    await db.schema
      .createTable('turn_changes')
      .addColumn('task_id', text, (c) => c.notNull())
      .addColumn('session_id', text, (c) => c.notNull())
      .addColumn('root', text, (c) => c.notNull())
      .addColumn('before_snapshot', text, (c) => c.notNull())
      .addColumn('after_snapshot', text)
      .addColumn('files', text, (c) => c.notNull())
      .addColumn('created_at', text, (c) => c.notNull())
      .addColumn('undone_at', text)
      // A turn may write in more than one directory of its project: one record each.
      .addPrimaryKeyConstraint('turn_changes_pk', ['task_id', 'root'])
      .execute();
    await db.schema
      .createIndex('turn_changes_session')
      .on('turn_changes')
      .columns(['session_id', 'created_at'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('turn_changes').ifExists().execute();
  },
};

const m0015_session_context: Migration = {
  async up(db: AnyDb) {
    // What a session's turns are given of its project's files: 'map' or 'full' (null: map).
    await db.schema
      .alterTable('sessions')
      .addColumn('context', onPostgres(db) ? sql`text collate "C"` : 'text')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('sessions').dropColumn('context').execute();
  },
};

const m0016_command_output: Migration = {
  async up(db: AnyDb) {
    // A command's kept output (JSON of {text, bytes, truncated}, up to a MiB), beside its tool
    // call's record rather than in it, so what lists a plan's calls never reads it. Null: the call
    // ran no command, or was stored before output was kept. JSON, not the text itself: PostgreSQL's
    // text refuses the NUL bytes a command may write, JSON escapes them.
    const text = onPostgres(db) ? sql`text collate "C"` : 'text';
    await db.schema.alterTable('plan_records').addColumn('output', text).execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('plan_records').dropColumn('output').execute();
  },
};

/** Every migration, by name; names sort in the order they must run. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': m0001_initial,
  '0002_registries': m0002_registries,
  '0003_plans': m0003_plans,
  '0004_task_counts': m0004_task_counts,
  '0005_message_keys_and_runners': m0005_message_keys_and_runners,
  '0006_push_outbox': m0006_push_outbox,
  '0007_retention': m0007_retention,
  '0008_chat': m0008_chat,
  '0009_accounts': m0009_accounts,
  '0010_sync': m0010_sync,
  '0011_postgres_collation': m0011_postgres_collation,
  '0012_session_forks': m0012_session_forks,
  '0013_grants_and_secrets': m0013_grants_and_secrets,
  '0014_turn_changes': m0014_turn_changes,
  '0015_session_context': m0015_session_context,
  '0016_command_output': m0016_command_output,
};

const provider: MigrationProvider = { getMigrations: () => Promise.resolve({ ...MIGRATIONS }) };

/** Every migration's name in the order they run (Kysely orders them by name). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

/** Whether `applied` (the names in `kysely_migration`, any order) is exactly this code's migrations. */
export function isCurrent(applied: readonly string[]): boolean {
  if (applied.length !== MIGRATION_NAMES.length) return false;
  const sorted = [...applied].sort();
  return MIGRATION_NAMES.every((name, i) => sorted[i] === name);
}

/** The migrator over our in-code migrations (Kysely keeps the applied list in `kysely_migration`). */
export function createMigrator(db: AnyDb): Migrator {
  return new Migrator({ db, provider });
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: AnyDb): Promise<void> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  if (error === undefined) return;
  const failed = results?.find((r) => r.status === 'Error')?.migrationName;
  const reason = error instanceof Error ? error.message : typeof error === 'string' ? error : 'unknown error';
  // Kysely refuses a database that has migrations this code does not know: a newer version wrote it.
  const hint = /missing/i.test(reason) ? ' (the database was written by a newer version of CleverAgents)' : '';
  throw new Error(`database migration ${failed ?? ''} failed: ${reason}${hint}`.replace('  ', ' '), { cause: error });
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

/** Which migrations have run and which have not (for diagnostics). */
export async function migrationStatus(db: AnyDb): Promise<MigrationStatus> {
  const all = await createMigrator(db).getMigrations();
  return {
    applied: all.filter((m) => m.executedAt !== undefined).map((m) => m.name),
    pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name),
  };
}
