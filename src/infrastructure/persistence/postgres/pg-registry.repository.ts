import type { NamespaceContents, Role } from '../../../application/index.ts';
import { NamespaceStore, RegistryStore } from '../rows/registry.store.ts';
import { pgAuthChangesOf, type PgAuthChanges } from './pg-auth-changes.ts';
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
  private readonly changes: PgAuthChanges;

  constructor(db: PgDatabase) {
    super(pgRunner(db));
    this.changes = pgAuthChangesOf(db);
  }

  // Memberships make principals: this process's own changes count at once (pg-auth-changes.ts),
  // even when the write failed after it may have committed.
  override create(name: string, owner: string, at: string): Promise<boolean> {
    return this.counted(super.create(name, owner, at));
  }

  override setMember(name: string, principal: string, role: Role, at: string): Promise<void> {
    return this.counted(super.setMember(name, principal, role, at));
  }

  override removeMember(name: string, principal: string): Promise<boolean> {
    return this.counted(super.removeMember(name, principal));
  }

  override purge(name: string): Promise<NamespaceContents> {
    return this.counted(super.purge(name));
  }

  private async counted<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      this.changes.changed();
    }
  }
}
