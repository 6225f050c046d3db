import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { type AnyDb, onPostgres } from './migration-db.ts';

export const m0011_postgres_collation: Migration = {
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

export const m0012_session_forks: Migration = {
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

export const m0013_grants_and_secrets: Migration = {
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

export const m0014_turn_changes: Migration = {
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

export const m0015_session_context: Migration = {
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

export const m0016_command_output: Migration = {
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
