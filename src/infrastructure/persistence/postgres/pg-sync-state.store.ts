import { SyncStateTableStore } from '../rows/sync-state.store.ts';
import type { PgDatabase } from './pg-database.ts';
import { pgRunner } from './pg-runner.ts';

/** The sync_state table in PostgreSQL (a put is one upsert). */
export class PgSyncStateStore extends SyncStateTableStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
