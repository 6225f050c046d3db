/**
 * `agents server migrate|backup|restore`: the composition root opens the server's database
 * directly, as `agents serve` does (these are the operator's commands on the machine that holds
 * the data, not A2A calls). Settings are checked as serve checks them (serve-settings.ts).
 */
import { copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import type {
  BackupReport,
  MaintenanceTarget,
  MigrationState,
  RestoreReport,
  ServerMaintenance,
} from '../presentation/cli/index.ts';
import { CliError, UsageError, type ExitReason } from '../presentation/cli/exit-codes.ts';
import {
  backupSqlite,
  checkSqliteBackup,
  compareMigrations,
  DEFAULT_LEASE_MS,
  MaintenanceError,
  openDatabase,
  pgMaintenance,
  readSecretKeyFile,
  redactUrl,
  restoreSqlite,
  sqliteAppliedMigrations,
  sqliteLiveRunners,
  type MaintenanceProblem,
} from '../infrastructure/index.ts';
import { databaseFile, resolveDataDir, secretKeyFile } from './paths.ts';
import { databaseOptions } from './serve-settings.ts';

/** The exit reason of each maintenance problem (total: a new problem without one does not compile). */
const EXIT_OF: Record<MaintenanceProblem, ExitReason> = {
  invalid: 'USAGE',
  missing: 'NOT_FOUND',
  busy: 'INVALID_STATE',
  tool: 'INTERNAL',
};

/** The database a command acts on: PostgreSQL (checked as serve checks it), else the data directory's file. */
interface Resolved {
  dataDir: string;
  url?: string | undefined;
  file: string;
  display: string;
}

function resolve(target: MaintenanceTarget): Resolved {
  const dataDir = resolveDataDir(target.dataDir);
  const file = databaseFile(dataDir);
  const { databaseUrl } = databaseOptions(target.databaseUrl !== undefined ? { databaseUrl: target.databaseUrl } : {});
  return databaseUrl
    ? { dataDir, url: databaseUrl, file, display: redactUrl(databaseUrl) }
    : { dataDir, file, display: file };
}

/** A maintenance refusal as the CLI reports it: one line, a hint, its own exit code. */
async function reported<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof MaintenanceError)
      throw new CliError(err.message, EXIT_OF[err.problem], 'MaintenanceError', err.hint);
    throw err;
  }
}

async function migrationState(target: MaintenanceTarget): Promise<MigrationState> {
  const db = resolve(target);
  const applied = db.url ? await (await pgMaintenance()).pgAppliedMigrations(db.url) : sqliteAppliedMigrations(db.file);
  return {
    database: db.display,
    engine: db.url ? 'postgresql' : 'sqlite',
    applied: applied.length,
    ...compareMigrations(applied),
  };
}

async function migrate(target: MaintenanceTarget): Promise<MigrationState> {
  const before = await migrationState(target);
  const db = resolve(target);
  if (db.url) await (await pgMaintenance()).pgMigrate(db.url);
  // Opening applies the pending migrations in one transaction, and refuses a newer schema.
  else await (await openDatabase({ file: db.file })).close();
  return before;
}

/** `<file>.key`: where --with-key puts the secret key beside a backup. */
const keyCopyOf = (file: string): string => `${file}.key`;

async function backup(target: MaintenanceTarget, file: string, withKey: boolean): Promise<BackupReport> {
  const db = resolve(target);
  const keyFile = secretKeyFile(db.dataDir);
  // Read first: a key file that is missing, not a key or open to others is refused before anything is written.
  if (withKey && (await readSecretKeyFile(keyFile)) === undefined)
    throw new MaintenanceError(
      'missing',
      `there is no secret key at ${keyFile}`,
      'a server makes its key when it first stores a secret: without one there is none to keep (leave out --with-key)',
    );
  if (db.url) await (await pgMaintenance()).pgBackup(db.url, file);
  else await backupSqlite(db.file, file);
  const report: BackupReport = { database: db.display, file, secretKeyFile: keyFile };
  if (withKey) {
    copyPrivate(keyFile, keyCopyOf(file));
    report.keyFile = keyCopyOf(file);
  }
  return report;
}

/** Copies a file readable by its owner only (written beside the target and renamed). */
function copyPrivate(from: string, to: string): void {
  const tmp = `${to}.${process.pid}.tmp`;
  try {
    copyFileSync(from, tmp);
    renameSync(tmp, to);
  } finally {
    rmSync(tmp, { force: true });
  }
}

async function restore(
  target: MaintenanceTarget,
  file: string,
  opts: { withKey: boolean; yes: boolean },
): Promise<RestoreReport> {
  const db = resolve(target);
  const keyFile = secretKeyFile(db.dataDir);
  // The key is checked before anything changes: a restore that cannot also restore its key stops here.
  if (opts.withKey && (await readSecretKeyFile(keyCopyOf(file))) === undefined)
    throw new MaintenanceError(
      'missing',
      `there is no key file ${keyCopyOf(file)} beside the backup`,
      'restore without --with-key and put the server key in place by hand',
    );
  let previous: string | undefined;
  if (db.url) {
    if (!opts.yes)
      throw new UsageError(
        `restoring drops what ${db.display} holds and replaces it with ${file}`,
        'stop every server instance on it first, then run again with --yes',
      );
    await (await pgMaintenance()).pgRestore(db.url, file);
  } else {
    checkSqliteBackup(file);
    const leaseMs = Number(process.env['CLEVERAGENTS_RUNNER_LEASE_MS']) || DEFAULT_LEASE_MS;
    const live = sqliteLiveRunners(db.file, leaseMs);
    if (live.length > 0)
      throw new MaintenanceError(
        'busy',
        `a server uses ${db.file} (${live.map((r) => `pid ${r.pid}${r.host === hostname() ? '' : ` on ${r.host}`}`).join(', ')})`,
        'stop it (and any local agent on this data directory), then restore',
      );
    // A fresh data directory is made as serve makes it: private.
    mkdirSync(db.dataDir, { recursive: true, mode: 0o700 });
    previous = (await restoreSqlite(file, db.file)).previous;
  }
  const report: RestoreReport = {
    database: db.display,
    file,
    secretKeyFile: keyFile,
    pending: (await migrationState(target)).pending,
    ...(previous ? { previous } : {}),
  };
  if (opts.withKey) {
    if (existsSync(keyFile)) {
      rmSync(`${keyFile}.pre-restore`, { force: true });
      linkSync(keyFile, `${keyFile}.pre-restore`);
    }
    copyPrivate(keyCopyOf(file), keyFile);
    report.keyRestored = keyFile;
  }
  return report;
}

/** The maintenance commands' access to the database, for the CLI. */
export function serverMaintenance(): ServerMaintenance {
  return {
    migrationState: (t) => reported(() => migrationState(t)),
    migrate: (t) => reported(() => migrate(t)),
    backup: (t, file, withKey) => reported(() => backup(t, file, withKey)),
    restore: (t, file, opts) => reported(() => restore(t, file, opts)),
  };
}
