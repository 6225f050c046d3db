import type { SqlRunner } from '../rows/sql-runner.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';

/** The PostgreSQL runner: the pool, with storage failures mapped to UNAVAILABLE. */
export function pgRunner(db: PgDatabase): SqlRunner {
  return {
    engine: 'postgresql',
    run: (fn) => db.run(fn),
    transaction: (fn) => db.transaction(fn),
    isConstraint: isPgConstraintError,
  };
}
