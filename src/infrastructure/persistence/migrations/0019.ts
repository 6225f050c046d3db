import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { type AnyDb, onPostgres } from './migration-db.ts';

/** The channel the account tables' triggers notify (pg-auth-changes.ts listens on it). */
export const AUTH_CHANGES_CHANNEL = 'ca_auth_changes';

/** The tables a principal is made of (the same list as SQLite's auth-changes.ts). */
const AUTH_TABLES = ['users', 'namespace_members', 'namespaces'] as const;

/**
 * PostgreSQL only: every committed write that may change a principal wakes every instance, so an
 * instance may reuse an authentication until then (SQLite learns the same from TEMP triggers and
 * `PRAGMA data_version`: nothing to store). Statement-level triggers: one notification per
 * statement, and PostgreSQL folds equal notifications of one transaction into one. A key's
 * last-use stamp (`last_used_at`, written about once a minute per key) changes no principal, so
 * updates of `api_keys` notify only when another column is set.
 */
export const m0019_auth_changes: Migration = {
  async up(db: AnyDb) {
    if (!onPostgres(db)) return;
    await sql`
      create or replace function ca_auth_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify(${sql.lit(AUTH_CHANGES_CHANNEL)}, '');
        return null;
      end
      $$`.execute(db);
    for (const table of AUTH_TABLES)
      await sql`
        create trigger ${sql.id(`ca_auth_${table}`)} after insert or update or delete or truncate
        on ${sql.table(table)} for each statement execute function ca_auth_changed()`.execute(db);
    await sql`
      create trigger ca_auth_api_keys after insert or delete or truncate
      or update of id, user_name, name, hash, created_at, expires_at, revoked_at
      on api_keys for each statement execute function ca_auth_changed()`.execute(db);
  },
  async down(db: AnyDb) {
    if (!onPostgres(db)) return;
    for (const table of [...AUTH_TABLES, 'api_keys'])
      await sql`drop trigger if exists ${sql.id(`ca_auth_${table}`)} on ${sql.table(table)}`.execute(db);
    await sql`drop function if exists ca_auth_changed()`.execute(db);
  },
};
