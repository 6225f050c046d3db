import type { SyncBase, SyncStateStore } from '../../../application/index.ts';
import type { RegistryKind } from '../../../domain/registry/entities.ts';
import type { SqlRunner } from './sql-runner.ts';

/** The sync_state table: what a local store and a server agreed on per entity. */
export class SyncStateTableStore implements SyncStateStore {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async list(remote: string): Promise<SyncBase[]> {
    const rows = await this.db.run((k) =>
      k.selectFrom('sync_state').selectAll().where('remote', '=', remote).orderBy('kind').orderBy('name').execute(),
    );
    return rows.map((r) => ({
      kind: r.kind as RegistryKind,
      name: r.name,
      revision: r.revision,
      contentHash: r.content_hash,
      localHash: r.local_hash,
      syncedAt: r.synced_at,
    }));
  }

  async put(remote: string, b: SyncBase): Promise<void> {
    const row = {
      revision: b.revision,
      content_hash: b.contentHash,
      local_hash: b.localHash,
      synced_at: b.syncedAt,
    };
    await this.db.run((k) =>
      k
        .insertInto('sync_state')
        .values({ remote, kind: b.kind, name: b.name, ...row })
        .onConflict((oc) => oc.columns(['remote', 'kind', 'name']).doUpdateSet(row))
        .execute(),
    );
  }

  async clear(remote: string): Promise<number> {
    const r = await this.db.run((k) => k.deleteFrom('sync_state').where('remote', '=', remote).executeTakeFirst());
    return Number(r.numDeletedRows);
  }
}
