import { UsageError } from '../presentation/cli/exit-codes.ts';
import { AppError } from '../domain/errors.ts';

/** What was being started when a start-up step failed (for the message). */
export interface StartupContext {
  host?: string;
  port?: number;
  dataDir: string;
  dbFile?: string;
  /** The PostgreSQL URL without its password, when the data lives there. */
  databaseUrl?: string;
}

/** A start-up problem that is already one clear line with a hint. */
export class StartupError extends UsageError {
  constructor(message: string, hint: string) {
    super(message, hint);
    this.name = 'StartupError';
  }
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/**
 * Turns whatever a start-up step threw (a listen error, a file system error, SQLite's complaint
 * about a corrupt file) into one line that says what is wrong and what to do about it. Start-up
 * problems are configuration problems: they exit with the usage/config code (2).
 */
export function describeStartupError(err: unknown, ctx: StartupContext): StartupError {
  if (err instanceof StartupError) return err;
  if (err instanceof UsageError) return new StartupError(err.message, err.hint ?? 'see agents serve --help');
  return (
    listenError(err, ctx) ??
    dataDirError(err, ctx) ??
    databaseError(err, ctx) ??
    new StartupError(`the server could not start: ${firstLine(messageOf(err))}`, 'run again with --verbose for details')
  );
}

/** The address cannot be listened on: in use, privileged, not this machine's, or not resolvable. */
function listenError(err: unknown, ctx: StartupContext): StartupError | undefined {
  const code = errno(err);
  const where = ctx.host !== undefined ? `${ctx.host}:${ctx.port ?? ''}` : '';
  const syscall = (err as NodeJS.ErrnoException | undefined)?.syscall;
  if (syscall === 'listen' || syscall === 'bind' || code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL') {
    switch (code) {
      case 'EADDRINUSE':
        return new StartupError(
          `cannot listen on ${where}: the port is already in use`,
          'stop the other server on that port, or choose another one with --port (0 picks a free port)',
        );
      case 'EACCES':
      case 'EPERM':
        return new StartupError(
          `cannot listen on ${where}: permission denied`,
          'ports below 1024 need privileges; use --port 1024 or higher',
        );
      case 'EADDRNOTAVAIL':
        return new StartupError(
          `cannot listen on ${where}: ${ctx.host ?? 'the host'} is not an address of this machine`,
          'use --host 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of its addresses',
        );
      default:
        return new StartupError(`cannot listen on ${where}: ${code ?? 'unknown error'}`, 'check --host and --port');
    }
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return new StartupError(
      `cannot listen on ${where}: the host name ${ctx.host ?? ''} does not resolve`,
      'use --host 127.0.0.1, 0.0.0.0 or an address of this machine',
    );
  }
  return undefined;
}

/** The data directory cannot be written: permissions, not a directory, or a full disk. */
function dataDirError(err: unknown, ctx: StartupContext): StartupError | undefined {
  const code = errno(err);
  const path = (err as NodeJS.ErrnoException | undefined)?.path ?? ctx.dataDir;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new StartupError(
      `the data directory cannot be written: ${path} (${code === 'EROFS' ? 'read-only file system' : 'permission denied'})`,
      'choose a writable directory with --data-dir or CLEVERAGENTS_DATA_DIR, or fix its permissions',
    );
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    return new StartupError(
      `the data directory is not a directory: ${path}`,
      'point --data-dir or CLEVERAGENTS_DATA_DIR at a directory',
    );
  }
  if (code === 'ENOSPC') {
    return new StartupError(
      `the data directory's disk is full: ${ctx.dataDir}`,
      'free some space, or choose another --data-dir',
    );
  }
  return undefined;
}

/** The database (PostgreSQL or SQLite) cannot be reached, opened, upgraded or is corrupt or locked. */
function databaseError(err: unknown, ctx: StartupContext): StartupError | undefined {
  const code = errno(err);
  const message = messageOf(err);
  if (ctx.databaseUrl && err instanceof AppError && err.reason === 'UNAVAILABLE') {
    const problem = /Storage is unavailable: ([^;]*)/.exec(message)?.[1] ?? firstLine(message);
    return new StartupError(
      `the PostgreSQL database ${ctx.databaseUrl} cannot be used: ${problem}`,
      'check that the server runs and that the URL, user, password and database name are right (--database-url or CLEVERAGENTS_DATABASE_URL)',
    );
  }
  if (ctx.databaseUrl && /database migration/i.test(message)) {
    return new StartupError(
      `the PostgreSQL database ${ctx.databaseUrl} cannot be upgraded: ${firstLine(message)}`,
      'a newer CleverAgents may have written it; upgrade every instance, or use another database',
    );
  }
  if (
    code === 'SQLITE_NOTADB' ||
    code === 'SQLITE_CORRUPT' ||
    /file is not a database|database disk image is malformed/i.test(message)
  ) {
    return new StartupError(
      `the database ${ctx.dbFile ?? ctx.dataDir} is corrupt or not a CleverAgents database`,
      'move it aside (the server then starts with an empty store) or restore a backup',
    );
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM') {
    return new StartupError(
      `the database ${ctx.dbFile ?? ctx.dataDir} cannot be opened for writing`,
      'check that the data directory and the database file are writable by this user',
    );
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new StartupError(
      `the database ${ctx.dbFile ?? ctx.dataDir} is locked by another process`,
      'wait for the other process, or use another --data-dir',
    );
  }
  if (/database migration/i.test(message)) {
    return new StartupError(
      `the database ${ctx.dbFile ?? ctx.dataDir} cannot be upgraded: ${firstLine(message)}`,
      'a newer CleverAgents may have written it; upgrade, or use another --data-dir',
    );
  }
  return undefined;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

const firstLine = (s: string): string => (s.split('\n')[0] ?? s).slice(0, 300);
