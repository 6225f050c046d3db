/**
 * The operator's work on a PostgreSQL database: where its migrations stand, applying them, and
 * backup and restore through PostgreSQL's own tools (`pg_dump --format=custom`, `pg_restore`),
 * which know every type and constraint better than a copy of ours would.
 */
import { spawn } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import pg from 'pg';
import { openPgDatabase } from '../postgres/pg-database.ts';
import { redactUrl } from '../postgres/pg-url.ts';
import { MaintenanceError } from './maintenance-error.ts';

const INSTALL_HINT =
  "install the PostgreSQL client tools of the server's major version or newer (Debian/Ubuntu: apt-get install postgresql-client)";

/** The migrations the database has had (none before the first start). Never writes. */
export async function pgAppliedMigrations(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ t: string | null }>("select to_regclass('kysely_migration')::text as t");
    if (rows[0]?.t == null) return [];
    return (await client.query<{ name: string }>('select name from kysely_migration')).rows.map((r) => r.name);
  } catch (err) {
    throw new MaintenanceError(
      'missing',
      `the PostgreSQL database ${redactUrl(url)} cannot be read: ${(err as Error).message}`,
      'check that the server runs and that the URL, user, password and database name are right',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Applies the pending migrations (under the same advisory lock as a starting server). */
export async function pgMigrate(url: string): Promise<void> {
  const db = await openPgDatabase({ url, poolSize: 1 });
  await db.close();
}

/** The URL without its password, and the password for PGPASSWORD: not on a command line `ps` shows. */
function split(url: string): { url: string; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  return { url: u.href, env: { ...process.env, ...(password !== '' ? { PGPASSWORD: password } : {}) } };
}

/** Runs a PostgreSQL tool; its stdout is returned, a missing tool or a failure is a {@link MaintenanceError}. */
function run(tool: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'ENOENT'
          ? new MaintenanceError(
              'tool',
              `${tool} is not installed (it is in the postgresql-client package)`,
              INSTALL_HINT,
            )
          : new MaintenanceError('tool', `${tool} could not run: ${e.message}`, INSTALL_HINT),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new MaintenanceError(
            'tool',
            `${tool} failed (exit ${code ?? 'signal'}): ${err.trim().split('\n')[0] ?? ''}`,
            'see the message above; the database and the file were left as they were',
          ),
        );
    });
  });
}

/** `pg_dump --format=custom` into `dest` (written beside it and renamed: whole or absent). */
export async function pgBackup(url: string, dest: string): Promise<void> {
  const { url: bare, env } = split(url);
  const tmp = `${dest}.${process.pid}.tmp`;
  try {
    await run('pg_dump', ['--format=custom', '--no-owner', '--file', tmp, '--dbname', bare], env);
    renameSync(tmp, dest);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Restores a `pg_dump --format=custom` file into the database: checked first to be a dump of a
 * CleverAgents database (it holds `kysely_migration`), then `pg_restore --clean --if-exists`,
 * which drops what the dump holds and creates it again.
 */
export async function pgRestore(url: string, file: string): Promise<void> {
  const { url: bare, env } = split(url);
  const list = await run('pg_restore', ['--list', file], env).catch((err: unknown) => {
    if (err instanceof MaintenanceError && /failed/.test(err.message))
      throw new MaintenanceError(
        'invalid',
        `${file} is not a pg_dump archive: ${err.message}`,
        'name a file `agents server backup` wrote',
      );
    throw err;
  });
  if (!/ TABLE \S+ kysely_migration /.test(list))
    throw new MaintenanceError(
      'invalid',
      `${file} is not a dump of a CleverAgents database (it has no kysely_migration table)`,
      'name a file `agents server backup` wrote',
    );
  await run(
    'pg_restore',
    ['--clean', '--if-exists', '--no-owner', '--single-transaction', '--dbname', bare, file],
    env,
  );
}
