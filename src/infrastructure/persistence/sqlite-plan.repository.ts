import type { SqliteDatabase } from './database.ts';
import { PlanStore } from './rows/plan.store.ts';
import { sqliteRunner } from './rows/sql-runner.ts';

/** Plans as JSON documents with their filterable columns, in SQLite. */
export class SqlitePlanRepository extends PlanStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}
