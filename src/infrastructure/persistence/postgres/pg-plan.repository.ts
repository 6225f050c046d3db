import { PlanStore } from '../rows/plan.store.ts';
import type { PgDatabase } from './pg-database.ts';
import { pgRunner } from './pg-runner.ts';

/** Plans and their records in PostgreSQL (the same queries as SQLite). */
export class PgPlanRepository extends PlanStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
