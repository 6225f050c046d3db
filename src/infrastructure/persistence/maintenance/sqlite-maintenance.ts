/**
 * The operator's work on a data directory's SQLite file, outside a running server: where its
 * migrations stand, an online backup (SQLite's backup API: consistent while a server writes), and
 * a restore that checks the backup and replaces the file in one rename.
 */
import { chmodSync, existsSync, linkSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { compareMigrations } from '../migrator.ts';
import { processExists } from '../../system/process-exists.ts';
import { MaintenanceError } from './maintenance-error.ts';

/** Opens a file read-only (never created); a file that is not SQLite is a {@link MaintenanceError}. */
function openReadOnly(file: string): BetterSqlite3.Database {
  try {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    return db;
  } catch (err) {
    throw new MaintenanceError(
      'invalid',
      `${file} cannot be opened as a SQLite database: ${(err as Error).message}`,
      'name a CleverAgents database file',
    );
  }
}

/** The names in `kysely_migration`; undefined when the table is not there (an empty or foreign file). */
function appliedIn(db: BetterSqlite3.Database, file: string): string[] | undefined {
  try {
    const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
    if (table === undefined) return undefined;
    return (db.prepare('select name from kysely_migration').all() as { name: string }[]).map((r) => r.name);
  } catch (err) {
    throw new MaintenanceError(
      'invalid',
      `${file} is not a readable SQLite database: ${(err as Error).message}`,
      'name a CleverAgents database file',
    );
  }
}

/** The migrations a data directory's database has had; an absent file has had none. Never writes. */
export function sqliteAppliedMigrations(file: string): string[] {
  if (!existsSync(file)) return [];
  const db = openReadOnly(file);
  try {
    return appliedIn(db, file) ?? [];
  } finally {
    db.close();
  }
}

/** A runner that holds the database: its process id and host. */
export interface LiveRunner {
  pid: number;
  host: string;
}

/**
 * The servers (and local agents) that use the database now: on this host, a lease whose process
 * still exists (a paused one too: it still has the file open); elsewhere, a lease renewed within
 * `leaseMs`. A clean stop deletes the lease; a killed process leaves one that is not live.
 */
export function sqliteLiveRunners(file: string, leaseMs: number, now = Date.now()): LiveRunner[] {
  if (!existsSync(file)) return [];
  const db = openReadOnly(file);
  try {
    const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'runners'").get();
    if (table === undefined) return [];
    const rows = db.prepare('select pid, host, heartbeat_at from runners').all() as Array<
      LiveRunner & { heartbeat_at: string }
    >;
    const here = hostname();
    return rows
      .filter((r) =>
        r.host === here ? r.pid !== process.pid && processExists(r.pid) : now - Date.parse(r.heartbeat_at) <= leaseMs,
      )
      .map(({ pid, host }) => ({ pid, host }));
  } finally {
    db.close();
  }
}

/**
 * Copies the database into `dest` through SQLite's online backup API: a consistent copy while a
 * server goes on writing. Written beside `dest` first and renamed, so `dest` is whole or absent.
 */
export async function backupSqlite(file: string, dest: string): Promise<void> {
  if (!existsSync(file))
    throw new MaintenanceError('missing', `there is no database at ${file}`, 'check --data-dir (or the config file)');
  const source = openReadOnly(file);
  const tmp = `${dest}.${process.pid}.tmp`;
  try {
    if (appliedIn(source, file) === undefined)
      throw new MaintenanceError('invalid', `${file} is not a CleverAgents database`, 'check --data-dir');
    await source.backup(tmp);
    // It holds what the database holds (push credentials, sealed secrets): its owner's only.
    chmodSync(tmp, 0o600);
    renameSync(tmp, dest);
  } finally {
    source.close();
    rmSync(tmp, { force: true });
  }
}

/**
 * Checks that `file` is a whole CleverAgents database this code can use (an older schema is fine:
 * the server brings it up to date when it starts); returns its applied migrations.
 */
export function checkSqliteBackup(file: string): string[] {
  if (!existsSync(file)) throw new MaintenanceError('missing', `there is no backup at ${file}`, 'name the backup file');
  const db = openReadOnly(file);
  try {
    const applied = appliedIn(db, file);
    if (applied === undefined || applied.length === 0)
      throw new MaintenanceError(
        'invalid',
        `${file} is not a CleverAgents database (it has no migration table)`,
        'name a file `agents server backup` wrote',
      );
    const { unknown } = compareMigrations(applied);
    if (unknown.length > 0)
      throw new MaintenanceError(
        'invalid',
        `${file} was written by a newer version of CleverAgents (migrations ${unknown.join(', ')})`,
        'restore it with that version or a newer one',
      );
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok')
      throw new MaintenanceError('invalid', `${file} is damaged (quick_check: ${String(check)})`, 'use another backup');
    return applied;
  } finally {
    db.close();
  }
}

/**
 * Replaces the database `file` with the backup: the backup is copied (through the backup API,
 * so the copy stands alone, without a WAL) beside `file` and renamed over it in one step. The old
 * database is first checkpointed (its WAL must not be replayed onto the new file) and kept as
 * `<file>.pre-restore`. The caller has checked that no server uses the file.
 */
export async function restoreSqlite(backup: string, file: string): Promise<{ previous?: string }> {
  const tmp = `${file}.restore.${process.pid}.tmp`;
  const source = openReadOnly(backup);
  try {
    await source.backup(tmp);
    chmodSync(tmp, 0o600);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  } finally {
    source.close();
  }
  let previous: string | undefined;
  if (existsSync(file)) {
    const old = new BetterSqlite3(file, { fileMustExist: true });
    try {
      old.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      old.close();
    }
    previous = `${file}.pre-restore`;
    rmSync(previous, { force: true });
    linkSync(file, previous);
  }
  renameSync(tmp, file);
  for (const extra of ['-wal', '-shm']) rmSync(`${file}${extra}`, { force: true });
  return previous !== undefined ? { previous } : {};
}
