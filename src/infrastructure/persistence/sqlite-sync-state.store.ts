import type { SqliteDatabase } from './database.js';
import { SyncStateTableStore } from './rows/sync-state.store.js';
import { sqliteRunner } from './rows/sql-runner.js';

/** The sync_state table in SQLite. */
export class SqliteSyncStateStore extends SyncStateTableStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}
