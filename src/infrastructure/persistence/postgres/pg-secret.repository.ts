import { SecretTableStore } from '../rows/secret.store.ts';
import type { PgDatabase } from './pg-database.ts';
import { pgRunner } from './pg-runner.ts';

/** A namespace's secrets (ciphertexts) in PostgreSQL; concurrent sets of one secret queue on its row. */
export class PgSecretRepository extends SecretTableStore {
  constructor(db: PgDatabase) {
    super(pgRunner(db));
  }
}
