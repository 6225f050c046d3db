/**
 * PostgreSQL for the tests: CA_TEST_PG_URL names a server's admin URL (`.ci/run` starts a
 * throwaway cluster and sets it; locally `source .ci/postgres.sh` does the same). Each test file
 * gets a database of its own, dropped afterwards. Without the variable the PostgreSQL tests are
 * skipped — loudly — except in CI, where that is a failure.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env['CA_TEST_PG_URL'] || undefined;

let warned = false;

/** Why the PostgreSQL tests cannot run here, or false when they can (`{ skip: pgSkip() }`). */
export function pgSkip(): string | false {
  if (PG_ADMIN_URL) return false;
  if (process.env['CI'])
    throw new Error('CA_TEST_PG_URL is not set: in CI the PostgreSQL tests must run (.ci/run starts the cluster)');
  const why = 'PostgreSQL is absent: set CA_TEST_PG_URL (e.g. `source .ci/postgres.sh`) to run the PostgreSQL tests';
  if (!warned) {
    warned = true;
    process.stderr.write(`\n*** SKIPPED: ${why} ***\n\n`);
  }
  return why;
}

export interface PgTestDatabase {
  /** The URL of a new, empty database. */
  url: string;
  drop(): Promise<void>;
}

/** The admin URL with another database name. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Creates an empty database for one test file (or one test; the bench passes its own admin URL). */
export async function createPgDatabase(prefix = 'ca_t', adminUrl = PG_ADMIN_URL): Promise<PgTestDatabase> {
  if (!adminUrl) throw new Error(pgSkip() || 'no PostgreSQL');
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin(adminUrl, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(adminUrl, name),
    drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function admin(adminUrl: string, statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}
