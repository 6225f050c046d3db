import type { SqliteDatabase } from './database.ts';
import { SyncStateTableStore } from './rows/sync-state.store.ts';
import { sqliteRunner } from './rows/sql-runner.ts';

/** The sync_state table in SQLite. */
export class SqliteSyncStateStore extends SyncStateTableStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}
