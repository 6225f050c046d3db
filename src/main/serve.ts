import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServeOptions } from '../presentation/cli/index.js';
import { LOCAL_PRINCIPAL } from '../application/index.js';
import { BearerTokenAuthenticator } from '../protocol/server/auth.js';
import { A2aHttpServer } from '../protocol/server/http.server.js';
import { A2aStdioServer } from '../protocol/server/stdio.server.js';
import { buildApp, createLogger } from './app.js';
import { resolveDataDir, tokenFile } from './paths.js';
import { VERSION } from './version.js';

const HTTP_GRACE_MS = 5_000;
const STDIO_DRAIN_MS = 2_000;

/** `agents serve`: A2A over stdio (local mode) or HTTP (server mode). Returns the exit code. */
export async function serve(opts: ServeOptions): Promise<number> {
  const dataDir = resolveDataDir(opts.dataDir);
  return opts.stdio ? serveStdio(opts, dataDir) : serveHttp(opts, dataDir);
}

async function serveStdio(opts: ServeOptions, dataDir: string): Promise<number> {
  const logger = createLogger(opts.verbose ? 'debug' : 'warn');
  const app = await buildApp({ dataDir, logger, defaultActor: opts.defaultActor, card: { endpoint: 'stdio://local', auth: 'none' } });
  const server = new A2aStdioServer({
    dispatcher: app.dispatcher,
    card: app.card,
    logger,
    serverInfo: { name: 'cleveragents', version: VERSION },
    input: process.stdin,
    output: process.stdout,
    principal: LOCAL_PRINCIPAL,
  });
  const stop = (): void => {
    process.stdin.destroy();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await server.done;
  // The client is gone (or asked us to stop): running turns get a short while, under the 3 s
  // the client waits before SIGTERM.
  await app.drain(STDIO_DRAIN_MS);
  await app.close();
  // Timers of abandoned actor turns must not keep the agent alive once its client is gone.
  process.exit(0);
}

async function serveHttp(opts: ServeOptions, dataDir: string): Promise<number> {
  const logger = createLogger(opts.verbose ? 'debug' : 'info');
  const { token, file, generated } = resolveToken(opts.token, dataDir);
  const host = opts.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}`;
  const app = await buildApp({
    dataDir,
    logger,
    defaultActor: opts.defaultActor,
    tokenFile: file,
    card: { endpoint: `${base}:${opts.port}/a2a`, auth: 'bearer' },
  });
  const server = new A2aHttpServer({
    dispatcher: app.dispatcher,
    card: app.card,
    auth: new BearerTokenAuthenticator(token, { ...LOCAL_PRINCIPAL, kind: 'token' }),
    logger,
    maxBodyBytes: opts.maxBodyBytes,
    ready: async () => (await app.facade.health.check()).storage === 'ok',
  });
  const addr = await server.listen(opts.port, host);
  const endpoint = `${base}:${addr.port}/a2a`;
  app.card.setEndpoint(endpoint);
  if (generated) {
    process.stderr.write(`Generated a server token (stored in ${file}, mode 600). Use it as: Authorization: Bearer ${token}\n`);
  } else if (file) {
    process.stderr.write(`Using the server token stored in ${file}\n`);
  }
  process.stderr.write(`listening on ${base}:${addr.port} (JSON-RPC at ${endpoint}, Agent Card at ${base}:${addr.port}/.well-known/agent-card.json)\n`);

  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  // Running turns may finish within the drain deadline (their blocked senders get the answer)
  // while the server stops taking requests; what still runs then ends FAILED.
  await Promise.all([server.close(HTTP_GRACE_MS), app.drain(Number(process.env['CLEVERAGENTS_DRAIN_MS']) || HTTP_GRACE_MS - 1_000)]);
  await app.close();
  process.exit(0);
}

/** `--token`, else CLEVERAGENTS_SERVER_TOKEN, else the stored token, else a new one (0600 file). */
function resolveToken(flag: string | undefined, dataDir: string): { token: string; file?: string; generated: boolean } {
  const given = flag ?? process.env['CLEVERAGENTS_SERVER_TOKEN'];
  if (given) return { token: given, generated: false };
  const file = tokenFile(dataDir);
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), file, generated: false };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, file, generated: true };
}
