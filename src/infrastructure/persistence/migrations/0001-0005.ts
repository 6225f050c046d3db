import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { AnyDb } from './migration-db.ts';

// The first migrations: tasks and sessions, registries, plans, task counts, idempotent sends and runners.

export const m0001_initial: Migration = {
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

export const m0002_registries: Migration = {
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

export const m0003_plans: Migration = {
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

export const m0004_task_counts: Migration = {
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

export const m0005_message_keys_and_runners: Migration = {
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
