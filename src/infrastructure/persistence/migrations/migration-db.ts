import { PostgresAdapter, type Kysely } from 'kysely';

/*
 * Migrations are written with Kysely's schema builder only, so the same list runs on SQLite and on
 * PostgreSQL. Timestamps are ISO 8601 strings in `toISOString()` form (fixed width, UTC), which sort
 * as instants under any collation; JSON documents are text. Never edit a migration that has
 * shipped: add the next one.
 */

// Migrations see the database as it was when they were written, not as `DB` describes it today.
export type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** True when the migration runs on PostgreSQL (the few steps that must differ ask). */
export function onPostgres(db: AnyDb): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
