/** What `agents serve` checks before anything opens (a bad value changes nothing), in both modes. */
import { mkdirSync } from 'node:fs';
import type { ServeOptions } from '../presentation/cli/index.ts';
import type { RetentionPolicy } from '../application/index.ts';
import { isPostgresUrl, redactUrl } from '../infrastructure/index.ts';
import { messageOf } from '../domain/errors.ts';
import type { App } from './app.ts';
import { envInt } from './limits-config.ts';
import { describeStartupError, StartupError, type StartupContext } from './startup-errors.ts';

/** Retention defaults (README, Configuration): 30 days, no count limit, a sweep every hour. */
const DEFAULT_RETENTION_DAYS = 30;
const SWEEP_EVERY_MS = 60 * 60_000;
/** The first sweep soon after start, so that short-lived local agents sweep too. */
const FIRST_SWEEP_MS = 10_000;

/**
 * Where the data lives: `--database-url` / CLEVERAGENTS_DATABASE_URL names a PostgreSQL database
 * (checked here: a bad URL changes nothing); without one, the SQLite file in the data directory.
 */
export function databaseOptions(
  opts: Pick<ServeOptions, 'databaseUrl' | 'databasePool'>,
  env: NodeJS.ProcessEnv = process.env,
): { databaseUrl?: string; databasePoolSize?: number } {
  const flag = opts.databaseUrl !== undefined;
  const url = (opts.databaseUrl ?? env['CLEVERAGENTS_DATABASE_URL'] ?? '').trim();
  const what = flag ? '--database-url' : 'CLEVERAGENTS_DATABASE_URL';
  const pool = opts.databasePool ?? envInt('CLEVERAGENTS_DATABASE_POOL', 1, 1000);
  if (url === '') {
    if (opts.databasePool !== undefined)
      throw new StartupError(
        '--database-pool is set but no PostgreSQL database is',
        'pass --database-url postgres://…',
      );
    return {};
  }
  if (!isPostgresUrl(url))
    throw new StartupError(
      `${what} must be a PostgreSQL URL (postgres://… or postgresql://…), got ${JSON.stringify(redactUrl(url).slice(0, 200))}`,
      'pass --database-url postgres://user:password@host:5432/cleveragents, or leave it out to use SQLite',
    );
  try {
    new URL(url);
  } catch {
    throw new StartupError(
      `${what} is not a valid URL`,
      'write it as postgres://user:password@host:5432/db (percent-encode special characters in the password)',
    );
  }
  return { databaseUrl: url, ...(pool !== undefined ? { databasePoolSize: pool } : {}) };
}

/** `--retention-days` / `--retention-max-tasks`, else their environment variables; undefined: retention off. */
export function retentionPolicy(opts: ServeOptions): RetentionPolicy | undefined {
  const days = opts.retentionDays ?? envInt('CLEVERAGENTS_RETENTION_DAYS', 0, 36500) ?? DEFAULT_RETENTION_DAYS;
  const maxTasks = opts.retentionMaxTasks ?? envInt('CLEVERAGENTS_RETENTION_MAX_TASKS', 0) ?? 0;
  if (days === 0 && maxTasks === 0) return undefined;
  return { ...(days > 0 ? { maxAgeDays: days } : {}), ...(maxTasks > 0 ? { maxTasks } : {}) };
}

/** Starts the retention sweeps (none when retention is off); returns what stops them. */
export function startSweeper(app: App, policy: RetentionPolicy | undefined): () => void {
  if (!policy) return () => {};
  return app.facade.retention.start(policy, { firstMs: FIRST_SWEEP_MS, everyMs: SWEEP_EVERY_MS });
}

/** The public base URL: absolute http(s), no query, fragment or credentials; no trailing slash. */
export function parsePublicUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new StartupError(
      `the public URL ${JSON.stringify(raw.slice(0, 200))} is not an absolute URL`,
      'pass --public-url https://agents.example.com (the address clients use, e.g. your proxy)',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new StartupError(
      `the public URL must use http or https (got ${url.protocol})`,
      'pass --public-url https://agents.example.com',
    );
  if (url.username || url.password || url.search || url.hash)
    throw new StartupError(
      'the public URL must not carry credentials, a query or a fragment',
      'pass the base URL only, e.g. --public-url https://agents.example.com/team',
    );
  return url.href.replace(/\/+$/, '');
}

/** Makes the workspace root if missing (once the data directory proved usable). */
export function makeWorkspaceRoot(root: string): void {
  try {
    mkdirSync(root, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new StartupError(
      `the workspace root ${root} cannot be made: ${messageOf(err)}`,
      'pass --workspace-root (or CLEVERAGENTS_WORKSPACE_ROOT) naming a directory this user may write',
    );
  }
}

/** A start-up step: what it throws becomes a StartupError that names the setting and the place. */
export function startup<T>(ctx: StartupContext, step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw describeStartupError(err, ctx);
  }
}

export async function startupAsync<T>(ctx: StartupContext, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw describeStartupError(err, ctx);
  }
}
