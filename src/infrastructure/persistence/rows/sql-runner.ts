import type { Kysely, Transaction } from 'kysely';
import { isConstraintError } from '../storage-failures.ts';
import { type DB } from '../database-schema.ts';
import { type SqliteDatabase } from '../database.ts';

/**
 * How a repository written once against Kysely runs its queries on one engine: SQLite (one
 * connection, one writer) or PostgreSQL (a pool shared by several instances). The stores built on
 * it differ only where the engines do (row locks, constraint error codes).
 */
export interface SqlRunner {
  readonly engine: 'sqlite' | 'postgresql';
  /** Runs `fn` outside a transaction (one statement, or reads that need no common snapshot). */
  run<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
  /** Runs `fn` in one transaction. */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
  /** True for a violated primary key or unique constraint (`unique`) or foreign key (`foreign`). */
  isConstraint(err: unknown, kind: 'unique' | 'foreign'): boolean;
}

/** The SQLite runner: Kysely over the database's one connection. */
export function sqliteRunner(db: SqliteDatabase): SqlRunner {
  return {
    engine: 'sqlite',
    run: (fn) => fn(db.kysely),
    transaction: (fn) => db.kysely.transaction().execute(fn),
    isConstraint: (err, kind) =>
      kind === 'foreign'
        ? isConstraintError(err, 'FOREIGNKEY')
        : isConstraintError(err, 'PRIMARYKEY') || isConstraintError(err, 'UNIQUE'),
  };
}
