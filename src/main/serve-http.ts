/** `agents serve` in server mode: A2A over HTTP+SSE, with bearer authentication. */
import type { ServeOptions } from '../presentation/cli/index.ts';
import type { Logger, RetentionPolicy } from '../application/index.ts';
import { UsageError } from '../presentation/cli/index.ts';
import { redactUrl } from '../infrastructure/index.ts';
import { AuthThrottle, FacadeAuthenticator } from '../protocol/server/auth.ts';
import type { A2aHttpServer } from '../protocol/server/http.server.ts';
import { TrustedProxies } from '../protocol/server/request-origin.ts';
import { buildApp, createLogger, type App, type AppOptions, type OidcOptions } from './app.ts';
import { egressSettings } from './egress-config.ts';
import { envInt, envList, installBackstop, resolveLimits, resolveUsageLimits } from './limits-config.ts';
import { databaseFile, workspaceRootOf } from './paths.ts';
import { oidcOptions } from './serve-oidc.ts';
import {
  databaseOptions,
  makeWorkspaceRoot,
  parsePublicUrl,
  retentionPolicy,
  startSweeper,
  startup,
  startupAsync,
} from './serve-settings.ts';
import { checkToken, resolveToken } from './serve-token.ts';
import {
  DEFAULT_DRAIN_DEADLINE_MS,
  DEFAULT_DRAIN_WINDOW_MS,
  drainAndStop,
  stopSignals,
  type DrainSettings,
} from './serve-drain.ts';
import { describeStartupError, type StartupContext } from './startup-errors.ts';
import {
  openTracing,
  serverTelemetry,
  telemetrySettings,
  type ServerTelemetry,
  type TelemetrySettings,
} from './telemetry-wiring.ts';

/** Server mode's settings, all checked before anything opens. */
interface HttpSettings {
  host: string;
  /** `http://host` (IPv6 in brackets), without the port. */
  base: string;
  publicUrl: string | undefined;
  retention: RetentionPolicy | undefined;
  maxBodyBytes: number | undefined;
  authFailures: number;
  oidc: OidcOptions | undefined;
  /** Internal hosts outbound requests may reach. */
  egressEntries: readonly string[];
  token: { token: string; file?: string; generated: boolean };
  workspaceRoot: string;
  /** Proxies whose X-Forwarded-For names the client. */
  proxies: TrustedProxies;
  drain: DrainSettings;
  telemetry: TelemetrySettings;
  app: Omit<AppOptions, 'logger' | 'dataDir'>;
}

/**
 * Server mode. Its stderr is its log: every line, start-up and shutdown included, is one JSON
 * object (pino), for the log collector an operator points at it.
 */
export async function serveHttp(opts: ServeOptions, dataDir: string): Promise<number> {
  const logger = createLogger(opts.verbose ? 'debug' : 'info');
  installBackstop(logger);
  const ctx: StartupContext = { dataDir, dbFile: databaseFile(dataDir), host: opts.host, port: opts.port };
  let started: Started;
  try {
    started = await start(opts, dataDir, ctx, logger);
  } catch (err) {
    throw logged(logger, describeStartupError(err, ctx));
  }
  const { app, server, settings, tracing } = started;
  // Taken once serving: a signal while the server starts still ends it at once, as Node does.
  const signals = stopSignals();
  const stopSweeper = startSweeper(app, settings.retention);
  await drainAndStop(server, app, settings.drain, signals, logger);
  stopSweeper();
  await tracing?.shutdown();
  process.exit(0);
}

interface Started {
  app: App;
  server: A2aHttpServer;
  settings: HttpSettings;
  tracing: Awaited<ReturnType<typeof openTracing>>;
}

/**
 * A start-up error as one log line (its hint a field), marked as told so that the CLI prints no
 * second, plain copy (under --format json it still writes its envelope to stdout); exit code 2.
 */
function logged(logger: Logger, err: UsageError): UsageError {
  logger.error({ type: err.name, hint: err.hint, exitCode: 2 }, err.message);
  err.logged = true;
  return err;
}

async function start(opts: ServeOptions, dataDir: string, ctx: StartupContext, logger: Logger): Promise<Started> {
  const s = httpSettings(opts, dataDir, ctx);
  const tracing = await startupAsync(ctx, () => openTracing(s.telemetry, logger));
  const app = await startupAsync(ctx, () => buildApp({ ...s.app, dataDir, logger, tracer: tracing?.tracer }));
  // The server token is the administrator's key (the first start makes the administrator).
  let admin: { user: string; created: boolean };
  let server: A2aHttpServer;
  let port: number;
  try {
    makeWorkspaceRoot(s.workspaceRoot);
    admin = await app.facade.users.ensureServerToken(s.token.token);
    const telemetry = await serverTelemetry(s.telemetry, app, tracing?.tracer, () => server.openStreams);
    server = await httpServer(app, s, logger, telemetry);
    port = (await server.listen(opts.port, s.host)).port;
  } catch (err) {
    await app.close();
    throw describeStartupError(err, ctx);
  }
  const endpoint = `${s.base}:${port}/a2a`;
  // Behind a proxy the bind address is not what clients use: the card keeps the public URL.
  if (!s.publicUrl) app.card.setEndpoint(endpoint);
  announce(logger, s, admin, port);
  return { app, server, settings: s, tracing };
}

/** Everything that can be checked without side effects first: a bad value changes nothing. */
function httpSettings(opts: ServeOptions, dataDir: string, ctx: StartupContext): HttpSettings {
  const host = opts.host;
  const publicUrl = startup(ctx, () => parsePublicUrl(opts.publicUrl ?? process.env['CLEVERAGENTS_PUBLIC_URL']));
  const retention = startup(ctx, () => retentionPolicy(opts));
  const limits = startup(ctx, () => resolveLimits(opts));
  const usageLimits = startup(ctx, () => resolveUsageLimits(opts));
  const maxBodyBytes = startup(ctx, () => opts.maxBodyBytes ?? envInt('CLEVERAGENTS_MAX_BODY_BYTES', 1));
  const authFailures = startup(ctx, () => envInt('CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE', 0, 1_000_000) ?? 10);
  const oidc = startup(ctx, () => oidcOptions(opts));
  const database = startup(ctx, () => databaseOptions(opts));
  const egress = startup(ctx, () => egressSettings(opts.allowEgress));
  if (database.databaseUrl) ctx.databaseUrl = redactUrl(database.databaseUrl);
  const given = opts.token ?? process.env['CLEVERAGENTS_SERVER_TOKEN'];
  if (given !== undefined)
    startup(ctx, () => checkToken(given, opts.token !== undefined ? '--token' : 'CLEVERAGENTS_SERVER_TOKEN'));
  const token = startup(ctx, () => resolveToken(given, dataDir));
  const workspaceRoot = workspaceRootOf(opts.workspaceRoot, dataDir);
  const telemetry = startup(ctx, () => telemetrySettings(opts));
  const proxies = startup(ctx, () => trustedProxies(opts.trustProxy));
  const drain: DrainSettings = {
    windowMs: startup(
      ctx,
      () => opts.drainWindowMs ?? envInt('CLEVERAGENTS_DRAIN_WINDOW_MS', 0, 600_000) ?? DEFAULT_DRAIN_WINDOW_MS,
    ),
    deadlineMs: startup(
      ctx,
      () => opts.drainMs ?? envInt('CLEVERAGENTS_DRAIN_MS', 0, 3_600_000) ?? DEFAULT_DRAIN_DEADLINE_MS,
    ),
  };
  const base = `http://${host.includes(':') ? `[${host}]` : host}`;
  const app: HttpSettings['app'] = {
    defaultActor: opts.defaultActor,
    tokenFile: token.file,
    workspaceRoot,
    limits,
    usageLimits,
    oidc,
    ...database,
    confinement: { readOnlyPaths: opts.readOnlyPaths },
    ...(opts.allowEgress ? { allowEgress: opts.allowEgress } : {}),
    card: { endpoint: publicUrl ? `${publicUrl}/a2a` : `${base}:${opts.port}/a2a`, auth: 'bearer' },
  };
  const egressEntries = egress.entries;
  return {
    host,
    base,
    publicUrl,
    retention,
    maxBodyBytes,
    authFailures,
    oidc,
    egressEntries,
    token,
    workspaceRoot,
    proxies,
    drain,
    telemetry,
    app,
  };
}

/** `--trust-proxy` (repeatable), else CLEVERAGENTS_TRUST_PROXY (comma-separated); none by default. */
function trustedProxies(flags: readonly string[] | undefined): TrustedProxies {
  const fromFlags = flags !== undefined && flags.length > 0;
  const entries = fromFlags ? flags : envList(process.env['CLEVERAGENTS_TRUST_PROXY']);
  try {
    return new TrustedProxies(entries);
  } catch (err) {
    throw new UsageError(
      `${fromFlags ? '--trust-proxy' : 'CLEVERAGENTS_TRUST_PROXY'}: ${(err as Error).message}`,
      'give the address or CIDR range of each proxy in front of the server, e.g. --trust-proxy 10.0.0.0/8',
    );
  }
}

async function httpServer(
  app: App,
  s: HttpSettings,
  logger: Logger,
  telemetry: ServerTelemetry,
): Promise<A2aHttpServer> {
  // Imported here, not at the top: an ESM import of node:http reads all its exports, and its lazy
  // WebSocket getters load Node's bundled undici (~10 ms of CPU) that a local agent never uses.
  const { A2aHttpServer } = await import('../protocol/server/http.server.ts');
  return new A2aHttpServer({
    dispatcher: app.dispatcher,
    card: app.card,
    auth: new FacadeAuthenticator(app.facade.authentication),
    logger,
    maxBodyBytes: s.maxBodyBytes,
    authThrottle: s.authFailures > 0 ? new AuthThrottle({ maxFailures: s.authFailures, windowMs: 60_000 }) : null,
    ready: async () => (await app.facade.health.check()).storage === 'ok',
    trustedProxies: s.proxies,
    telemetry: telemetry.requests,
    metrics: telemetry.exposition,
  });
}

/**
 * What the operator reads once the server listens: log lines whose text says it and whose fields
 * carry it. The generated token is shown this once: the operator must see it to use it.
 */
function announce(logger: Logger, s: HttpSettings, admin: { user: string; created: boolean }, port: number): void {
  const { token, file, generated } = s.token;
  if (generated)
    logger.info(
      { tokenFile: file, token },
      `Generated a server token (stored in ${file}, mode 600). Use it as: Authorization: Bearer ${token}`,
    );
  else if (file) logger.info({ tokenFile: file }, `Using the server token stored in ${file}`);
  if (s.oidc)
    logger.info(
      { issuer: s.oidc.issuer, audience: s.oidc.audience },
      `accepting JWTs of ${s.oidc.issuer} for audience ${s.oidc.audience}`,
    );
  if (s.telemetry.metrics)
    logger.info({ metrics: '/metrics' }, 'serving Prometheus metrics at /metrics (to administrators)');
  if (s.telemetry.otlpEndpoint)
    logger.info({ otlpEndpoint: s.telemetry.otlpEndpoint }, `sending traces to ${s.telemetry.otlpEndpoint}`);
  if (s.egressEntries.length > 0)
    logger.info(
      { allowEgress: s.egressEntries },
      `outbound requests may reach these internal hosts: ${s.egressEntries.join(', ')}`,
    );
  if (s.proxies.size > 0)
    logger.info(
      { trustProxy: s.proxies.entries },
      `client addresses are read from X-Forwarded-For when the connection comes from ${s.proxies.entries.join(', ')}`,
    );
  logger.info(
    { administrator: admin.user, created: admin.created },
    admin.created
      ? `Created the administrator ${admin.user} (an owner of local/); the server token is their key. Make keys for others with: agents user add <name>`
      : `The server token is the key of administrator ${admin.user}`,
  );
  const at = `${s.base}:${port}`;
  logger.info(
    { url: at, port, endpoint: `${at}/a2a`, agentCard: `${at}/.well-known/agent-card.json` },
    `listening on ${at} (JSON-RPC at ${at}/a2a, Agent Card at ${at}/.well-known/agent-card.json)`,
  );
  if (s.publicUrl)
    logger.info(
      { publicUrl: s.publicUrl },
      `public URL ${s.publicUrl} (the Agent Card points clients at ${s.publicUrl}/a2a)`,
    );
}
