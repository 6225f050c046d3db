import { Migrator, type MigrationProvider } from 'kysely/migration';
import { MIGRATIONS } from './migrations/index.ts';
import type { AnyDb } from './migrations/migration-db.ts';

// Runs the in-code migrations (./migrations/) with Kysely's migrator, which keeps the applied list in `kysely_migration`.

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

/** Where a database's applied migrations stand against this code's. */
export interface MigrationComparison {
  /** This code's migrations the database has not had yet (in the order they run). */
  pending: string[];
  /** Migrations the database had that this code does not know: a newer version wrote it. */
  unknown: string[];
}

/** Compares the names in `kysely_migration` (any order) with this code's migrations. */
export function compareMigrations(applied: readonly string[]): MigrationComparison {
  const done = new Set(applied);
  return {
    pending: MIGRATION_NAMES.filter((name) => !done.has(name)),
    unknown: [...done].filter((name) => !MIGRATION_NAMES.includes(name)).sort(),
  };
}
