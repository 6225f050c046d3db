import type { SqliteDatabase } from './database.ts';
import { SecretTableStore } from './rows/secret.store.ts';
import { sqliteRunner } from './rows/sql-runner.ts';

/** A namespace's secrets (ciphertexts) in SQLite. */
export class SqliteSecretRepository extends SecretTableStore {
  constructor(db: SqliteDatabase) {
    super(sqliteRunner(db));
  }
}
