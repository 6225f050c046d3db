import { SqliteDialect, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';

/**
 * The one SQLite connection, held by one user at a time: a Kysely query or transaction, or a run
 * of raw better-sqlite3 statements. Raw statements run while a Kysely transaction sits between two
 * awaits would silently join it (and vanish with its rollback); this lock keeps them apart. Unlike
 * borrowing Kysely's connection for raw work, taking a free lock costs no promise round trips.
 */
export class ConnectionLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  /** Takes the lock if nobody holds it or waits for it. */
  tryAcquire(): boolean {
    if (this.held) return false;
    this.held = true;
    return true;
  }

  /** Resolves once the lock is ours (first come, first served). */
  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Hands the lock to the next waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

/** Kysely's SQLite dialect whose connection is taken through a {@link ConnectionLock}. */
export class LockedSqliteDialect extends SqliteDialect {
  private readonly lock: ConnectionLock;
  /** What callers see of a failed statement (storage failures become UNAVAILABLE). */
  private readonly mapError: (err: unknown) => unknown;

  constructor(config: SqliteDialectConfig, lock: ConnectionLock, mapError: (err: unknown) => unknown = (err) => err) {
    super(config);
    this.lock = lock;
    this.mapError = mapError;
  }

  override createDriver(): Driver {
    const inner = super.createDriver();
    const lock = this.lock;
    const mapError = this.mapError;
    // Kysely 0.29 serialises SQLite's one connection itself (RuntimeDriver's mutex, taken before
    // acquireConnection); this lock is still needed to keep raw statements apart from it.
    const driver: Driver = {
      init: (options) => inner.init(options),
      async acquireConnection(options): Promise<DatabaseConnection> {
        await lock.acquire();
        try {
          const conn = await inner.acquireConnection(options);
          return {
            async executeQuery(query, queryOptions) {
              try {
                return await conn.executeQuery(query, queryOptions);
              } catch (err) {
                throw mapError(err);
              }
            },
            streamQuery: (query, chunkSize, queryOptions) => conn.streamQuery(query, chunkSize, queryOptions),
          };
        } catch (err) {
          lock.release();
          throw err;
        }
      },
      async releaseConnection(connection, options) {
        try {
          await inner.releaseConnection(connection, options);
        } finally {
          lock.release();
        }
      },
      beginTransaction: (connection, settings) => inner.beginTransaction(connection, settings),
      commitTransaction: (connection) => inner.commitTransaction(connection),
      rollbackTransaction: (connection) => inner.rollbackTransaction(connection),
      destroy: (options) => inner.destroy(options),
    };
    if (inner.savepoint) driver.savepoint = inner.savepoint.bind(inner);
    if (inner.rollbackToSavepoint) driver.rollbackToSavepoint = inner.rollbackToSavepoint.bind(inner);
    if (inner.releaseSavepoint) driver.releaseSavepoint = inner.releaseSavepoint.bind(inner);
    return driver;
  }
}
