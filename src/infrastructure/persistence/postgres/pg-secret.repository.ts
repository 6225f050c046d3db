import { SecretTableStore } from '../rows/secret.store.js';
import type { PgDatabase } from './pg-database.js';
import { pgRunner } from './pg-runner.js';

/** A namespace's secrets (ciphertexts) in PostgreSQL; concurrent sets of one secret queue on its row. */
export class PgSecretRepository extends SecretTableStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
