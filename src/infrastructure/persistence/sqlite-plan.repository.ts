import type { SqliteDatabase } from './database.js';
import { PlanStore } from './rows/plan.store.js';
import { sqliteRunner } from './rows/sql-runner.js';

/** Plans as JSON documents with their filterable columns, in SQLite. */
export class SqlitePlanRepository extends PlanStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}
