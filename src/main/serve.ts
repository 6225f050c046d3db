import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { ServeOptions } from '../presentation/cli/index.ts';
import type { Logger, RetentionPolicy } from '../application/index.ts';
import { AuthThrottle, FacadeAuthenticator, MIN_TOKEN_LENGTH } from '../protocol/server/auth.ts';
import { A2aStdioServer } from '../protocol/server/stdio.server.ts';
import { isPostgresUrl, redactUrl } from '../infrastructure/index.ts';
import { buildApp, createLogger, type App, type OidcOptions } from './app.ts';
import { egressSettings } from './egress-config.ts';
import { envInt, installBackstop, resolveLimits } from './limits-config.ts';
import { databaseFile, resolveDataDir, tokenFile, workspaceRootOf } from './paths.ts';
import { describeStartupError, StartupError, type StartupContext } from './startup-errors.ts';
import { startupMark } from './startup-marks.ts';
import { VERSION } from './version.ts';
import { messageOf } from '../domain/errors.ts';

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

/** Retention defaults (README, Configuration): 30 days, no count limit, a sweep every hour. */
const DEFAULT_RETENTION_DAYS = 30;
const SWEEP_EVERY_MS = 60 * 60_000;
/** The first sweep soon after start, so that short-lived local agents sweep too. */
const FIRST_SWEEP_MS = 10_000;

const HTTP_GRACE_MS = 5_000;
const STDIO_DRAIN_MS = 2_000;

/**
 * `agents serve`: A2A over stdio (local mode) or HTTP (server mode). Returns the exit code. A
 * start-up problem throws a {@link StartupError}: one line with a hint, exit code 2.
 */
export async function serve(opts: ServeOptions): Promise<number> {
  const dataDir = resolveDataDir(opts.dataDir);
  return opts.stdio ? serveStdio(opts, dataDir) : serveHttp(opts, dataDir);
}

async function serveStdio(opts: ServeOptions, dataDir: string): Promise<number> {
  startupMark('agent:loaded');
  const logger = createLogger(opts.verbose ? 'debug' : 'warn');
  installBackstop(logger);
  const ctx: StartupContext = { dataDir, dbFile: databaseFile(dataDir) };
  let building: Promise<StdioApp> | undefined;
  // An agent spawned before the CLI knew whether it needs one (early-agent.ts) builds its services
  // while the CLI loads its commands, so that the two start side by side rather than one after
  // the other; but only in a data directory that exists: an agent the command turns out not to
  // use creates none. A failure is reported below, once a client is there to hear it.
  if (!opts.awaitClient || existsSync(dataDir)) {
    building = buildStdioApp(opts, dataDir, logger, ctx);
    building.catch(() => {});
  }
  if (opts.awaitClient && !(await clientWrote(process.stdin))) {
    // Nobody came: what was built gives its lease back.
    await building?.then(
      ({ app }) => app.close(),
      () => {},
    );
    return 0;
  }
  startupMark('agent:client-wrote');
  const { app, retention } = await (building ?? buildStdioApp(opts, dataDir, logger, ctx));
  const stopSweeper = startSweeper(app, retention);
  const server = new A2aStdioServer({
    dispatcher: app.dispatcher,
    card: app.card,
    logger,
    serverInfo: { name: 'cleveragents', version: VERSION },
    input: process.stdin,
    output: process.stdout,
    // The local user's namespaces are read per request: sync and `namespace create` add to them.
    principal: () => app.facade.namespaces.localPrincipal(),
  });
  startupMark('agent:ready');
  // Paused while the client was awaited; the server listens now.
  if (opts.awaitClient) {
    (process.stdin as Partial<Socket>).ref?.();
    process.stdin.resume();
  }
  // Connected to a server with auto-pull on: pull now if the last pull is older than the interval,
  // then every interval while this agent lives (errors are logged; the timer never keeps it alive).
  const autoPull = app.facade.sync.startAutoPull();
  const stop = (): void => {
    process.stdin.destroy();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await server.done;
  autoPull.stop();
  stopSweeper();
  // The client is gone (or asked us to stop): running turns get a short while, under the 3 s
  // the client waits before SIGTERM.
  await app.drain(STDIO_DRAIN_MS);
  await app.close();
  // Timers of abandoned actor turns must not keep the agent alive once its client is gone.
  process.exit(0);
}

interface StdioApp {
  app: App;
  retention: RetentionPolicy | undefined;
}

/** The local agent's settings, checked before anything opens (a bad value changes nothing), and its app. */
async function buildStdioApp(
  opts: ServeOptions,
  dataDir: string,
  logger: Logger,
  ctx: StartupContext,
): Promise<StdioApp> {
  const retention = startup(ctx, () => retentionPolicy(opts));
  const limits = startup(ctx, () => resolveLimits(opts));
  const database = startup(ctx, () => databaseOptions(opts));
  startup(ctx, () => egressSettings(opts.allowEgress));
  if (database.databaseUrl) ctx.databaseUrl = redactUrl(database.databaseUrl);
  const app = await startupAsync(ctx, () =>
    buildApp({
      dataDir,
      logger,
      defaultActor: opts.defaultActor,
      limits,
      ...database,
      confinement: { readOnlyPaths: opts.readOnlyPaths },
      ...(opts.allowEgress ? { allowEgress: opts.allowEgress } : {}),
      card: { endpoint: 'stdio://local', auth: 'none' },
    }),
  );
  startupMark('agent:built');
  return { app, retention };
}

/**
 * Resolves once the client has written (true) or closed the stream first (false). The bytes stay
 * in the stream: a `readable` listener reads nothing. The stream is left paused and unref'd until
 * the server takes it, so that a start-up failure still lets the process exit at once.
 */
function clientWrote(input: NodeJS.ReadStream): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (wrote: boolean): void => {
      input.off('readable', onReadable);
      input.off('error', onError);
      input.pause();
      (input as Partial<Socket>).unref?.();
      resolve(wrote);
    };
    const onReadable = (): void => done(input.readableLength > 0);
    const onError = (): void => done(false);
    input.on('readable', onReadable);
    input.on('error', onError);
  });
}

async function serveHttp(opts: ServeOptions, dataDir: string): Promise<number> {
  const logger = createLogger(opts.verbose ? 'debug' : 'info');
  installBackstop(logger);
  const host = opts.host;
  const ctx: StartupContext = { dataDir, dbFile: databaseFile(dataDir), host, port: opts.port };
  // Everything that can be checked without side effects first: a bad value changes nothing.
  const publicUrl = startup(ctx, () => parsePublicUrl(opts.publicUrl ?? process.env['CLEVERAGENTS_PUBLIC_URL']));
  const retention = startup(ctx, () => retentionPolicy(opts));
  const limits = startup(ctx, () => resolveLimits(opts));
  const maxBodyBytes = startup(ctx, () => opts.maxBodyBytes ?? envInt('CLEVERAGENTS_MAX_BODY_BYTES', 1));
  const authFailures = startup(ctx, () => envInt('CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE', 0, 1_000_000) ?? 10);
  const oidc = startup(ctx, () => oidcOptions(opts));
  const database = startup(ctx, () => databaseOptions(opts));
  const egress = startup(ctx, () => egressSettings(opts.allowEgress));
  if (database.databaseUrl) ctx.databaseUrl = redactUrl(database.databaseUrl);
  const given = opts.token ?? process.env['CLEVERAGENTS_SERVER_TOKEN'];
  if (given !== undefined)
    startup(ctx, () => checkToken(given, opts.token !== undefined ? '--token' : 'CLEVERAGENTS_SERVER_TOKEN'));
  const { token, file, generated } = startup(ctx, () => resolveToken(given, dataDir));
  const workspaceRoot = workspaceRootOf(opts.workspaceRoot, dataDir);
  const base = `http://${host.includes(':') ? `[${host}]` : host}`;
  const app = await startupAsync(ctx, () =>
    buildApp({
      dataDir,
      logger,
      defaultActor: opts.defaultActor,
      tokenFile: file,
      workspaceRoot,
      limits,
      oidc,
      ...database,
      confinement: { readOnlyPaths: opts.readOnlyPaths },
      ...(opts.allowEgress ? { allowEgress: opts.allowEgress } : {}),
      card: { endpoint: publicUrl ? `${publicUrl}/a2a` : `${base}:${opts.port}/a2a`, auth: 'bearer' },
    }),
  );
  // The server token is the administrator's key (the first start makes the administrator).
  let admin: { user: string; created: boolean };
  try {
    makeWorkspaceRoot(workspaceRoot);
    admin = await app.facade.users.ensureServerToken(token);
  } catch (err) {
    await app.close();
    throw describeStartupError(err, ctx);
  }
  // Imported here, not at the top: an ESM import of node:http reads all its exports, and its lazy
  // WebSocket getters load Node's bundled undici (~10 ms of CPU) that a local agent never uses.
  const { A2aHttpServer } = await import('../protocol/server/http.server.ts');
  const server = new A2aHttpServer({
    dispatcher: app.dispatcher,
    card: app.card,
    auth: new FacadeAuthenticator(app.facade.authentication),
    logger,
    maxBodyBytes: maxBodyBytes,
    authThrottle: authFailures > 0 ? new AuthThrottle({ maxFailures: authFailures, windowMs: 60_000 }) : null,
    ready: async () => (await app.facade.health.check()).storage === 'ok',
  });
  let addr;
  try {
    addr = await server.listen(opts.port, host);
  } catch (err) {
    await app.close();
    throw describeStartupError(err, ctx);
  }
  const endpoint = `${base}:${addr.port}/a2a`;
  // Behind a proxy the bind address is not what clients use: the card keeps the public URL.
  if (!publicUrl) app.card.setEndpoint(endpoint);
  const stopSweeper = startSweeper(app, retention);
  if (generated) {
    process.stderr.write(
      `Generated a server token (stored in ${file}, mode 600). Use it as: Authorization: Bearer ${token}\n`,
    );
  } else if (file) {
    process.stderr.write(`Using the server token stored in ${file}\n`);
  }
  if (oidc) process.stderr.write(`accepting JWTs of ${oidc.issuer} for audience ${oidc.audience}\n`);
  if (egress.entries.length > 0)
    process.stderr.write(`outbound requests may reach these internal hosts: ${egress.entries.join(', ')}\n`);
  process.stderr.write(
    admin.created
      ? `Created the administrator ${admin.user} (an owner of local/); the server token is their key. Make keys for others with: agents user add <name>\n`
      : `The server token is the key of administrator ${admin.user}\n`,
  );
  process.stderr.write(
    `listening on ${base}:${addr.port} (JSON-RPC at ${endpoint}, Agent Card at ${base}:${addr.port}/.well-known/agent-card.json)\n`,
  );
  if (publicUrl) process.stderr.write(`public URL ${publicUrl} (the Agent Card points clients at ${publicUrl}/a2a)\n`);

  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  stopSweeper();
  // Running turns may finish within the drain deadline (their blocked senders get the answer)
  // while the server stops taking requests; what still runs then ends FAILED.
  await Promise.all([
    server.close(HTTP_GRACE_MS),
    app.drain(Number(process.env['CLEVERAGENTS_DRAIN_MS']) || HTTP_GRACE_MS - 1_000),
  ]);
  await app.close();
  process.exit(0);
}

/** Makes the workspace root if missing (once the data directory proved usable). */
function makeWorkspaceRoot(root: string): void {
  try {
    mkdirSync(root, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new StartupError(
      `the workspace root ${root} cannot be made: ${messageOf(err)}`,
      'pass --workspace-root (or CLEVERAGENTS_WORKSPACE_ROOT) naming a directory this user may write',
    );
  }
}

function startup<T>(ctx: StartupContext, step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw describeStartupError(err, ctx);
  }
}

async function startupAsync<T>(ctx: StartupContext, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw describeStartupError(err, ctx);
  }
}

function startSweeper(app: App, policy: RetentionPolicy | undefined): () => void {
  if (!policy) return () => {};
  return app.facade.retention.start(policy, { firstMs: FIRST_SWEEP_MS, everyMs: SWEEP_EVERY_MS });
}

/** `--retention-days` / `--retention-max-tasks`, else their environment variables; undefined: retention off. */
function retentionPolicy(opts: ServeOptions): RetentionPolicy | undefined {
  const days = opts.retentionDays ?? envInt('CLEVERAGENTS_RETENTION_DAYS', 0, 36500) ?? DEFAULT_RETENTION_DAYS;
  const maxTasks = opts.retentionMaxTasks ?? envInt('CLEVERAGENTS_RETENTION_MAX_TASKS', 0) ?? 0;
  if (days === 0 && maxTasks === 0) return undefined;
  return { ...(days > 0 ? { maxAgeDays: days } : {}), ...(maxTasks > 0 ? { maxTasks } : {}) };
}

/**
 * `--oidc-*` flags, else CLEVERAGENTS_OIDC_*; undefined without an issuer. The issuer is an https
 * URL (http only on a loopback address); an issuer needs an audience, and the other settings an issuer.
 */
export function oidcOptions(opts: ServeOptions, env: NodeJS.ProcessEnv = process.env): OidcOptions | undefined {
  const pick = (flag: string | undefined, name: string): string | undefined => {
    const v = (flag ?? env[`CLEVERAGENTS_OIDC_${name}`])?.trim();
    return v === '' ? undefined : v;
  };
  const issuer = pick(opts.oidcIssuer, 'ISSUER');
  const audience = pick(opts.oidcAudience, 'AUDIENCE');
  const clientId = pick(opts.oidcClientId, 'CLIENT_ID');
  const userClaim = pick(opts.oidcUserClaim, 'USER_CLAIM');
  const rolesClaim = pick(opts.oidcRolesClaim, 'ROLES_CLAIM');
  if (!issuer) {
    const stray = [
      [audience, '--oidc-audience'],
      [clientId, '--oidc-client-id'],
      [userClaim, '--oidc-user-claim'],
      [rolesClaim, '--oidc-roles-claim'],
    ].find(([v]) => v !== undefined);
    if (stray)
      throw new StartupError(
        `${stray[1]} (or its CLEVERAGENTS_OIDC_* variable) is set but no OIDC issuer is`,
        'pass --oidc-issuer https://login.example.com/realms/team (or CLEVERAGENTS_OIDC_ISSUER), or drop the OIDC settings',
      );
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new StartupError(
      `the OIDC issuer ${JSON.stringify(issuer.slice(0, 200))} is not an absolute URL`,
      'pass --oidc-issuer https://login.example.com/realms/team (exactly the iss of its tokens)',
    );
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new StartupError(
      `the OIDC issuer must use https (got ${url.protocol}//${url.host})`,
      'pass the https URL of the issuer (http is accepted only on a loopback address)',
    );
  if (url.username || url.password || url.search || url.hash)
    throw new StartupError(
      'the OIDC issuer must not carry credentials, a query or a fragment',
      'pass the issuer URL exactly as its tokens name it (iss)',
    );
  if (!audience)
    throw new StartupError(
      'an OIDC issuer is configured without an audience',
      'pass --oidc-audience <aud> (or CLEVERAGENTS_OIDC_AUDIENCE): the aud this server requires in every JWT',
    );
  for (const [v, flag] of [
    [userClaim, '--oidc-user-claim'],
    [rolesClaim, '--oidc-roles-claim'],
    [clientId, '--oidc-client-id'],
    [audience, '--oidc-audience'],
  ] as const)
    if (v !== undefined && (/\s/.test(v) || v.length > 200))
      throw new StartupError(`${flag} must be one word of at most 200 characters`, `check the value of ${flag}`);
  return {
    issuer,
    audience,
    ...(clientId ? { clientId } : {}),
    ...(userClaim ? { userClaim } : {}),
    ...(rolesClaim ? { rolesClaim } : {}),
    discoveryTimeoutMs: envInt('CLEVERAGENTS_OIDC_DISCOVERY_TIMEOUT_MS', 1, 60_000, env),
    // A minute to thirty days: an access token is short-lived; a month-long one is a leaked password.
    maxTokenLifetimeSec: envInt('CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS', 60, 2_592_000, env),
  };
}

/** The public base URL: absolute http(s), no query, fragment or credentials; no trailing slash. */
function parsePublicUrl(raw: string | undefined): string | undefined {
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

function checkToken(token: string, source: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new StartupError(
      `the server token from ${source} is too short: it must be at least ${MIN_TOKEN_LENGTH} characters (got ${token.length})`,
      `use a longer random token (e.g. openssl rand -base64 32), or omit ${source} to have one generated`,
    );
  }
  if (/\s/.test(token))
    throw new StartupError(
      `the server token from ${source} contains white space`,
      'use a token without spaces or line breaks',
    );
}

/** The given token, else the stored token, else a new one (0600 file). */
function resolveToken(
  given: string | undefined,
  dataDir: string,
): { token: string; file?: string; generated: boolean } {
  if (given) return { token: given, generated: false };
  const file = tokenFile(dataDir);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw new StartupError(
        `the stored server token in ${file} is unusable (empty, too short or with white space)`,
        'delete the file to have a new token generated, or pass --token',
      );
    }
    return { token, file, generated: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, file, generated: true };
}
