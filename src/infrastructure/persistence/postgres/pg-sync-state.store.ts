import { SyncStateTableStore } from '../rows/sync-state.store.js';
import type { PgDatabase } from './pg-database.js';
import { pgRunner } from './pg-runner.js';

/** The sync_state table in PostgreSQL (a put is one upsert). */
export class PgSyncStateStore extends SyncStateTableStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
