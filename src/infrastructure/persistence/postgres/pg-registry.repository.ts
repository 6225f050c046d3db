import { NamespaceStore, RegistryStore } from '../rows/registry.store.ts';
import type { PgDatabase } from './pg-database.ts';
import { pgRunner } from './pg-runner.ts';

/** Registry entities and their references in PostgreSQL (the same queries as SQLite). */
export class PgRegistryRepository extends RegistryStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}

/** Namespaces and memberships in PostgreSQL; a purge holds the namespace row (`for update`). */
export class PgNamespaceRepository extends NamespaceStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
