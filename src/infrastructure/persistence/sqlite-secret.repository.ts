import type { SqliteDatabase } from './database.js';
import { SecretTableStore } from './rows/secret.store.js';
import { sqliteRunner } from './rows/sql-runner.js';

/** A namespace's secrets (ciphertexts) in SQLite. */
export class SqliteSecretRepository extends SecretTableStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}
