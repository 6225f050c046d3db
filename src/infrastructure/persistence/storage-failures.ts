import { randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { AppError } from '../../domain/errors.ts';
import type { Logger } from '../../application/index.ts';

/** True for a SQLite constraint violation of the given kind (`PRIMARYKEY`, `FOREIGNKEY`, `UNIQUE`, …). */
export function isConstraintError(err: unknown, kind: string): boolean {
  return err instanceof BetterSqlite3.SqliteError && err.code === `SQLITE_CONSTRAINT_${kind}`;
}

/** SQLite result codes that mean the storage failed (not the statement), with what to tell a caller. */
const STORAGE_PROBLEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^SQLITE_(BUSY|LOCKED)/, 'the database is locked by another process'],
  [/^SQLITE_READONLY/, 'the database is read-only'],
  [/^SQLITE_FULL/, 'the disk is full'],
  [/^SQLITE_(CORRUPT|NOTADB)/, 'the database file is damaged'],
  [/^SQLITE_(IOERR|CANTOPEN|PERM|PROTOCOL|NOLFS)/, 'the database cannot be read or written'],
];

/**
 * Storage failures (locked, read-only, full, damaged, I/O) become one UNAVAILABLE error each,
 * logged here once with a correlation id that every caller it fails sees in `error.data`; the
 * SQLite text (which may name tables or statements) stays in the log. Other errors pass through.
 */
export class StorageFailures {
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  map(err: unknown): unknown {
    if (err instanceof AppError || !(err instanceof BetterSqlite3.SqliteError)) return err;
    const problem = STORAGE_PROBLEMS.find(([re]) => re.test(err.code))?.[1];
    if (!problem) return err;
    const correlationId = randomUUID();
    this.logger.error({ err, code: err.code, correlationId }, `storage failed: ${problem}`);
    return new AppError('UNAVAILABLE', `Storage is unavailable: ${problem}; nothing was changed by this request`, {
      details: { correlationId },
      hint: `retry once the storage problem is fixed; the server log has the cause under correlation id ${correlationId}`,
      cause: err,
    });
  }
}
