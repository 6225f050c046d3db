import { PlanStore } from '../rows/plan.store.js';
import type { PgDatabase } from './pg-database.js';
import { pgRunner } from './pg-runner.js';

/** Plans and their records in PostgreSQL (the same queries as SQLite). */
export class PgPlanRepository extends PlanStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
