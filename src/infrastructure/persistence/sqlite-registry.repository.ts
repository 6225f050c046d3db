import { authChangesOf, type AuthChanges } from './auth-changes.ts';
import type { SqliteDatabase } from './database.ts';
import { NamespaceStore, RegistryStore } from './rows/registry.store.ts';
import { sqliteRunner } from './rows/sql-runner.ts';

/** Registry entities and their references, in SQLite (through Kysely; not a hot path). */
export class SqliteRegistryRepository extends RegistryStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}

/** Namespaces and memberships in SQLite. */
export class SqliteNamespaceRepository extends NamespaceStore {
  private readonly changes: AuthChanges;

  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
    this.changes = authChangesOf(db.sqlite);
  }

  version(): number {
    return this.changes.version();
  }
}
