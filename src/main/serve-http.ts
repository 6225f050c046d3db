/** `agents serve` in server mode: A2A over HTTP+SSE, with bearer authentication. */
import type { ServeOptions } from '../presentation/cli/index.ts';
import type { Logger, RetentionPolicy } from '../application/index.ts';
import { redactUrl } from '../infrastructure/index.ts';
import { AuthThrottle, FacadeAuthenticator } from '../protocol/server/auth.ts';
import type { A2aHttpServer } from '../protocol/server/http.server.ts';
import { buildApp, createLogger, type App, type AppOptions, type OidcOptions } from './app.ts';
import { egressSettings } from './egress-config.ts';
import { envInt, installBackstop, resolveLimits, resolveUsageLimits } from './limits-config.ts';
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
import { describeStartupError, type StartupContext } from './startup-errors.ts';
import {
  openTracing,
  serverTelemetry,
  telemetrySettings,
  type ServerTelemetry,
  type TelemetrySettings,
} from './telemetry-wiring.ts';

const HTTP_GRACE_MS = 5_000;

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
  telemetry: TelemetrySettings;
  app: Omit<AppOptions, 'logger' | 'dataDir'>;
}

export async function serveHttp(opts: ServeOptions, dataDir: string): Promise<number> {
  const logger = createLogger(opts.verbose ? 'debug' : 'info');
  installBackstop(logger);
  const ctx: StartupContext = { dataDir, dbFile: databaseFile(dataDir), host: opts.host, port: opts.port };
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
  const stopSweeper = startSweeper(app, s.retention);
  announce(s, admin, port);
  await signalled(logger);
  stopSweeper();
  // Running turns may finish within the drain deadline (their blocked senders get the answer)
  // while the server stops taking requests; what still runs then ends FAILED.
  await Promise.all([
    server.close(HTTP_GRACE_MS),
    app.drain(Number(process.env['CLEVERAGENTS_DRAIN_MS']) || HTTP_GRACE_MS - 1_000),
  ]);
  await app.close();
  await tracing?.shutdown();
  process.exit(0);
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
    telemetry,
    app,
  };
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
    telemetry: telemetry.requests,
    metrics: telemetry.exposition,
  });
}

/** What the operator reads on stderr once the server listens. */
function announce(s: HttpSettings, admin: { user: string; created: boolean }, port: number): void {
  const { token, file, generated } = s.token;
  const say = (line: string): void => void process.stderr.write(`${line}\n`);
  if (generated)
    say(`Generated a server token (stored in ${file}, mode 600). Use it as: Authorization: Bearer ${token}`);
  else if (file) say(`Using the server token stored in ${file}`);
  if (s.oidc) say(`accepting JWTs of ${s.oidc.issuer} for audience ${s.oidc.audience}`);
  if (s.telemetry.metrics) say('serving Prometheus metrics at /metrics (to administrators)');
  if (s.telemetry.otlpEndpoint) say(`sending traces to ${s.telemetry.otlpEndpoint}`);
  if (s.egressEntries.length > 0)
    say(`outbound requests may reach these internal hosts: ${s.egressEntries.join(', ')}`);
  say(
    admin.created
      ? `Created the administrator ${admin.user} (an owner of local/); the server token is their key. Make keys for others with: agents user add <name>`
      : `The server token is the key of administrator ${admin.user}`,
  );
  const at = `${s.base}:${port}`;
  say(`listening on ${at} (JSON-RPC at ${at}/a2a, Agent Card at ${at}/.well-known/agent-card.json)`);
  if (s.publicUrl) say(`public URL ${s.publicUrl} (the Agent Card points clients at ${s.publicUrl}/a2a)`);
}

/** Resolves at SIGTERM or SIGINT. */
function signalled(logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
