import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { ServeOptions } from '../presentation/cli/index.ts';
import type { Logger, RetentionPolicy } from '../application/index.ts';
import { A2aStdioServer } from '../protocol/server/stdio.server.ts';
import { redactUrl } from '../infrastructure/index.ts';
import { buildApp, createLogger, type App } from './app.ts';
import { egressSettings } from './egress-config.ts';
import { installBackstop, resolveLimits } from './limits-config.ts';
import { databaseFile, resolveDataDir } from './paths.ts';
import { serveHttp } from './serve-http.ts';
import { databaseOptions, retentionPolicy, startSweeper, startup, startupAsync } from './serve-settings.ts';
import type { StartupContext } from './startup-errors.ts';
import { startupMark } from './startup-marks.ts';
import { VERSION } from './version.ts';
import { openTracing, stdioTelemetry, telemetrySettings, type Tracing } from './telemetry-wiring.ts';

const STDIO_DRAIN_MS = 2_000;

/**
 * `agents serve`: A2A over stdio (local mode) or HTTP (server mode). Returns the exit code. A
 * start-up problem throws a StartupError (serve-settings.ts): one line with a hint, exit code 2.
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
  const { app, retention, tracing } = await (building ?? buildStdioApp(opts, dataDir, logger, ctx));
  const stopSweeper = startSweeper(app, retention);
  const server = stdioServer(app, logger, tracing);
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
  await tracing?.shutdown();
  // Timers of abandoned actor turns must not keep the agent alive once its client is gone.
  process.exit(0);
}

/** The local agent's server on this process's stdin and stdout. */
function stdioServer(app: App, logger: Logger, tracing: Tracing | undefined): A2aStdioServer {
  return new A2aStdioServer({
    dispatcher: app.dispatcher,
    card: app.card,
    logger,
    serverInfo: { name: 'cleveragents', version: VERSION },
    input: process.stdin,
    output: process.stdout,
    // The local user's namespaces are read per request: sync and `namespace create` add to them.
    principal: () => app.facade.namespaces.localPrincipal(),
    telemetry: stdioTelemetry(tracing?.tracer),
  });
}

interface StdioApp {
  app: App;
  retention: RetentionPolicy | undefined;
  tracing: Tracing | undefined;
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
  const telemetry = startup(ctx, () => telemetrySettings(opts));
  if (database.databaseUrl) ctx.databaseUrl = redactUrl(database.databaseUrl);
  // Off by default: then nothing of OpenTelemetry is loaded (the agent's start-up time matters).
  const tracing = await startupAsync(ctx, () => openTracing(telemetry, logger));
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
      tracer: tracing?.tracer,
    }),
  );
  startupMark('agent:built');
  return { app, retention, tracing };
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
