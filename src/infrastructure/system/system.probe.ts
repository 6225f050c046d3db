import fs from 'node:fs';
import type { DiagnosticCheck, SystemProbe } from '../../application/index.ts';
import type { SqliteDatabase } from '../persistence/database.ts';
import { migrationStatus } from '../persistence/migrator.ts';
import type { CommandConfinement } from '../tools/confinement.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
/** Below this much free space the data directory gets a warning. */
const DISK_WARN_BYTES = 1 * GiB;
/** Below this much free space SQLite writes (and WAL checkpoints) are about to fail. */
const DISK_FAIL_BYTES = 100 * MiB;
const MIN_NODE_MAJOR = 20;

/** The storage a probe reports on: a liveness ping and its own checks (see Storage). */
export interface ProbedStorage {
  ping(): Promise<void>;
  checks(): Promise<DiagnosticCheck[]>;
}

export interface SystemProbeOptions {
  storage: ProbedStorage;
  /** The directory holding local state (the SQLite file, sandboxes, the token file). */
  dataDir: string;
  /** The application's version, reported as is. */
  version: string;
  /** The server's bearer-token file, when one is configured. */
  tokenFile?: string | undefined;
  /** How commands run (bubblewrap, none, or unavailable), when the server runs commands. */
  confinement?: Pick<CommandConfinement, 'check'> | Promise<Pick<CommandConfinement, 'check'>> | undefined;
  /** Checks of the deployment beyond storage (e.g. the shared sandbox directory). */
  extra?: (() => Promise<DiagnosticCheck[]>) | undefined;
}

/** A check's outcome, before its name and category are added. */
export type Check = Omit<DiagnosticCheck, 'name' | 'category'>;

/** Runs one check: one that throws is reported as failed and the others still run. */
export async function runCheck(
  out: DiagnosticCheck[],
  name: string,
  category: DiagnosticCheck['category'],
  fn: () => Check | Promise<Check>,
): Promise<void> {
  let result: Check;
  try {
    result = await fn();
  } catch (err) {
    result = { status: 'fail', detail: `check failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  out.push({ name, category, ...result });
}

/** Diagnostics of a deployment: its storage (whichever engine), disk, versions and configuration. */
export class HostSystemProbe implements SystemProbe {
  private readonly opts: SystemProbeOptions;

  constructor(opts: SystemProbeOptions) {
    this.opts = opts;
  }

  ping(): Promise<void> {
    return this.opts.storage.ping();
  }

  async checks(): Promise<DiagnosticCheck[]> {
    const { dataDir, tokenFile, confinement } = this.opts;
    const out: DiagnosticCheck[] = [];
    try {
      out.push(...(await this.opts.storage.checks()));
    } catch (err) {
      out.push({
        name: 'database reachable',
        category: 'storage',
        status: 'fail',
        detail: `check failed: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
    await runCheck(out, 'free disk space', 'disk', async () => diskStatus(await freeBytes(dataDir), dataDir));
    await runCheck(out, 'node version', 'versions', () => nodeVersion(process.versions.node));
    await runCheck(out, 'cleveragents version', 'versions', () => ({ status: 'ok', detail: this.opts.version }));
    await runCheck(out, 'data directory', 'configuration', () => dataDirStatus(dataDir));
    if (tokenFile !== undefined) await runCheck(out, 'token file', 'configuration', () => tokenFileStatus(tokenFile));
    if (confinement)
      await runCheck(out, 'command confinement', 'configuration', async () => (await confinement).check());
    if (this.opts.extra) out.push(...(await this.opts.extra()));
    return out;
  }
}

/** The storage checks of the embedded SQLite file. */
export async function sqliteStorageChecks(db: SqliteDatabase, dbFile: string): Promise<DiagnosticCheck[]> {
  const out: DiagnosticCheck[] = [];
  const pragma = (query: string): string => String(db.sqlite.prepare(query).pluck().get());
  await runCheck(out, 'database reachable', 'storage', async () => {
    await db.exclusive(() => db.sqlite.prepare('select 1').get());
    return { status: 'ok', detail: dbFile === ':memory:' ? 'SQLite, in-memory database' : `SQLite ${dbFile}` };
  });
  await runCheck(out, 'database integrity', 'storage', () => integrity(db));
  await runCheck(out, 'journal mode', 'storage', () => journalMode(db, dbFile));
  await runCheck(out, 'schema migrations', 'storage', () => migrationCheck(db.kysely));
  await runCheck(out, 'database size', 'storage', () => databaseSize(dbFile));
  await runCheck(out, 'sqlite version', 'versions', () => ({
    status: 'ok',
    detail: `SQLite ${pragma('select sqlite_version() as v')}`,
  }));
  return out;
}

function integrity(db: SqliteDatabase): Check {
  const rows = db.sqlite.prepare('PRAGMA quick_check').pluck().all() as string[];
  if (rows.length === 1 && rows[0] === 'ok') return { status: 'ok', detail: 'quick_check passed' };
  return {
    status: 'fail',
    detail: `quick_check reported: ${rows.slice(0, 5).join('; ')}${rows.length > 5 ? ` (and ${rows.length - 5} more)` : ''}`,
    hint: 'stop the server, back up the database file and run `sqlite3 <file> .recover`',
  };
}

function journalMode(db: SqliteDatabase, dbFile: string): Check {
  const mode = String(db.sqlite.pragma('journal_mode', { simple: true }));
  if (mode === 'wal') return { status: 'ok', detail: 'WAL' };
  // SQLite cannot put an in-memory database in WAL mode; that is expected in tests.
  if (dbFile === ':memory:') return { status: 'ok', detail: `${mode} (in-memory database)` };
  return {
    status: 'warn',
    detail: `journal mode is ${mode}, not WAL: readers and the writer block each other`,
    hint: 'make sure the data directory is on a local file system that supports shared memory',
  };
}

/** Applied and pending migrations, on either engine. */
export async function migrationCheck(kysely: Parameters<typeof migrationStatus>[0]): Promise<Check> {
  const { applied, pending } = await migrationStatus(kysely);
  if (pending.length === 0)
    return { status: 'ok', detail: `${applied.length} applied, latest ${applied.at(-1) ?? 'none'}` };
  return {
    status: 'fail',
    detail: `pending: ${pending.join(', ')}`,
    hint: 'restart the server: migrations run at start-up',
  };
}

/** Classifies free space at the data directory. */
export function diskStatus(free: number, dir: string): Check {
  const detail = `${formatBytes(free)} free at ${dir}`;
  if (free < DISK_FAIL_BYTES)
    return { status: 'fail', detail, hint: 'free disk space: writes to the database will fail' };
  if (free < DISK_WARN_BYTES) return { status: 'warn', detail, hint: 'free disk space soon: less than 1 GiB left' };
  return { status: 'ok', detail };
}

/** Node.js must be at least the version the package declares. */
export function nodeVersion(version: string): Check {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return { status: 'ok', detail: `Node.js ${version}` };
  return {
    status: 'fail',
    detail: `Node.js ${version} is too old`,
    hint: `install Node.js ${MIN_NODE_MAJOR} or later`,
  };
}

async function freeBytes(dir: string): Promise<number> {
  const s = await fs.promises.statfs(dir);
  return s.bavail * s.bsize;
}

async function databaseSize(file: string): Promise<Check> {
  if (file === ':memory:') return { status: 'ok', detail: 'in-memory database' };
  let total = 0;
  const parts: string[] = [];
  for (const suffix of ['', '-wal']) {
    const size = await fs.promises.stat(file + suffix).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) continue;
    total += size;
    parts.push(`${suffix === '' ? 'database' : 'WAL'} ${formatBytes(size)}`);
  }
  return { status: 'ok', detail: `${formatBytes(total)} (${parts.join(', ')})` };
}

async function dataDirStatus(dir: string): Promise<Check> {
  const st = await fs.promises.stat(dir).catch(() => undefined);
  if (!st) return { status: 'fail', detail: `${dir} does not exist`, hint: `create it: mkdir -p -m 700 ${dir}` };
  if (!st.isDirectory()) return { status: 'fail', detail: `${dir} is not a directory` };
  try {
    await fs.promises.access(dir, fs.constants.W_OK);
  } catch {
    return { status: 'fail', detail: `${dir} is not writable`, hint: `check the owner and permissions of ${dir}` };
  }
  return { status: 'ok', detail: `${dir} exists and is writable` };
}

async function tokenFileStatus(file: string): Promise<Check> {
  const st = await fs.promises.stat(file).catch(() => undefined);
  if (!st) {
    return {
      status: 'warn',
      detail: `${file} does not exist`,
      hint: `write a random token to it, then chmod 600 ${file}`,
    };
  }
  if (!st.isFile()) return { status: 'fail', detail: `${file} is not a regular file` };
  // POSIX modes do not describe access on Windows.
  if (process.platform === 'win32') return { status: 'ok', detail: `${file} exists` };
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    return {
      status: 'warn',
      detail: `${file} has mode ${mode.toString(8).padStart(4, '0')}: other users can read the token`,
      hint: `chmod 600 ${file}`,
    };
  }
  return { status: 'ok', detail: `${file} exists with mode ${mode.toString(8).padStart(4, '0')}` };
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}
