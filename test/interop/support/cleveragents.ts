/**
 * Test support for the interop suites: runs the built CleverAgents server as a subprocess (the way
 * an operator runs it), picks ports, bounds every wait, and records what went over the wire.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE, repoPath } from '../../support/paths.ts';
import { freePort } from '../../support/ports.ts';
import { parseLogLines } from '../../support/log-lines.ts';

export { freePort };

const BIN = BUNDLE;
const SERVE = repoPath('src/main/serve.ts');

export interface RunningServer {
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** The JSON-RPC endpoint (…/a2a). */
  rpcUrl: string;
  port: number;
  token: string;
  dataDir: string;
  /** Which entry point started it: the CLI (`bin.js serve`) or, while the CLI is unfinished, serve.js. */
  launcher: 'bin' | 'serve.js';
  /** Everything the server wrote to stderr so far (for failure messages). */
  logs(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Default actor of new contexts, e.g. `builtin/conformance`. */
  actor?: string;
  /** The port to listen on: `0` (default) lets the server choose; `'free'` picks one first and passes it. */
  port?: number | 'free';
  startTimeoutMs?: number;
}

/** Starts `agents serve` on 127.0.0.1 with a fresh data dir and token. */
export async function startCleverAgents(opts: StartOptions = {}): Promise<RunningServer> {
  const token = `interop-${randomBytes(12).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'ca-interop-'));
  const port = opts.port === 'free' ? await freePort() : (opts.port ?? 0);
  const timeout = opts.startTimeoutMs ?? 15_000;
  // Stopped at once: no balancer waits on /ready here (the drain window is for one).
  const env: NodeJS.ProcessEnv = { ...process.env, CLEVERAGENTS_DRAIN_WINDOW_MS: '0' };
  delete env['CLEVERAGENTS_SERVER_TOKEN'];
  delete env['CLEVERAGENTS_DATA_DIR'];

  const binArgs = [BIN, 'serve', '--port', String(port), '--token', token, '--data-dir', dataDir];
  if (opts.actor) binArgs.push('--default-actor', opts.actor);
  const serveArgs = [
    '--input-type=module',
    '-e',
    `const m = await import(${JSON.stringify(SERVE)});
     await m.serve({ stdio: false, host: '127.0.0.1', port: Number(process.argv[1]), dataDir: process.argv[2], token: process.argv[3], verbose: false, defaultActor: process.argv[4] || undefined });`,
    String(port),
    dataDir,
    token,
    opts.actor ?? '',
  ];

  let attempt = await launch(binArgs, env, timeout);
  let launcher: RunningServer['launcher'] = 'bin';
  if ('failed' in attempt) {
    // The CLI entry point may not be finished yet: fall back to the serve() function it wraps.
    const first = attempt.failed;
    attempt = await launch(serveArgs, env, timeout);
    launcher = 'serve.js';
    if ('failed' in attempt) {
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(
        `could not start the CleverAgents server.\n--- bin.js serve ---\n${first}\n--- serve.js ---\n${attempt.failed}`,
      );
    }
  }
  const { child, url, stderr } = attempt;
  const actualPort = Number(new URL(url).port);
  let stopped: Promise<void> | undefined;
  return {
    baseUrl: url,
    rpcUrl: `${url}/a2a`,
    port: actualPort,
    token,
    dataDir,
    launcher,
    logs: () => stderr.join(''),
    stop: () =>
      (stopped ??= (async () => {
        await killChild(child);
        rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

type Launch = { child: ChildProcess; url: string; stderr: string[] } | { failed: string };

function launch(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Launch> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr: string[] = [];
    let out = '';
    let settled = false;
    const finish = (v: Launch): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ failed: `no "listening on" line within ${timeoutMs} ms\n${stderr.join('')}${out}` });
    }, timeoutMs);
    child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => {
      stderr.push(c.toString('utf8'));
      // Server mode logs JSON lines: the "listening on" one carries the URL as a field.
      const text = stderr.join('');
      try {
        const listening = parseLogLines(text.slice(0, text.lastIndexOf('\n') + 1)).find((l) =>
          l.msg.startsWith('listening on'),
        );
        if (typeof listening?.['url'] === 'string') finish({ child, url: listening['url'], stderr });
      } catch (notJson) {
        child.kill('SIGKILL');
        finish({ failed: (notJson as Error).message });
      }
    });
    child.once('exit', (code, signal) =>
      finish({ failed: `exited (${signal ?? `code ${code}`}) before listening\n${stderr.join('')}${out}` }),
    );
    child.once('error', (err) => finish({ failed: `spawn failed: ${err.message}` }));
  });
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const escalate = setTimeout(() => child.kill('SIGKILL'), 4_000);
  let giveUp: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((r) => (giveUp = setTimeout(r, 6_000)))]);
  clearTimeout(escalate);
  clearTimeout(giveUp);
}

// ---- bounded waiting ---------------------------------------------------------------------------

/** Rejects when `p` takes longer than `ms`. */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface CollectOptions<T> {
  timeoutMs: number;
  /** Stop (and abort) once this returns true for the events so far. */
  until?: (ev: T, all: T[]) => boolean;
  /** Aborted when collecting stops, so the HTTP stream is closed too. */
  abort?: AbortController;
  what?: string;
  /** Called after each event (e.g. to trigger the next step once the first event arrived). */
  onEvent?: (ev: T, all: T[]) => void;
}

/**
 * Reads a stream until it ends (or `until` says stop), failing if that takes longer than
 * `timeoutMs`. The timeout message lists what arrived.
 */
export async function collect<T>(stream: AsyncIterable<T>, opts: CollectOptions<T>): Promise<T[]> {
  const events: T[] = [];
  const it = stream[Symbol.asyncIterator]();
  const deadline = Date.now() + opts.timeoutMs;
  const stop = (): void => {
    opts.abort?.abort();
    void Promise.resolve(it.return?.()).catch(() => {});
  };
  try {
    for (;;) {
      const left = deadline - Date.now();
      const next = await withTimeout(
        it.next(),
        Math.max(1, left),
        `${opts.what ?? 'stream'} (got ${events.length} events: ${preview(events)})`,
      );
      if (next.done) return events;
      events.push(next.value);
      opts.onEvent?.(next.value, events);
      if (opts.until?.(next.value, events)) {
        stop();
        return events;
      }
    }
  } catch (err) {
    stop();
    throw err;
  }
}

function preview(events: unknown[]): string {
  const s = JSON.stringify(events, (_k, v: unknown) =>
    typeof v === 'bigint' ? String(v) : v instanceof Uint8Array ? '<bytes>' : v,
  );
  return s.length > 1500 ? `${s.slice(0, 1500)}…` : s;
}

// ---- the wire ------------------------------------------------------------------------------------

export interface WireExchange {
  url: string;
  /** The JSON-RPC method, when the request was one. */
  method: string | undefined;
  requestHeaders: Headers;
  requestBody: unknown;
  status: number;
  contentType: string;
  /** The whole response body (for SSE: once the stream has ended). */
  body: Promise<string>;
}

/**
 * A fetch that records every exchange (request, status, raw body) so tests can check the bytes
 * a server sent, not only what an SDK made of them.
 */
export function recordingFetch(base: typeof fetch = globalThis.fetch): {
  fetch: typeof fetch;
  exchanges: WireExchange[];
} {
  const exchanges: WireExchange[] = [];
  const tap = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await base(input, init);
    let requestBody: unknown;
    try {
      requestBody = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
      requestBody = init?.body;
    }
    const method =
      typeof requestBody === 'object' && requestBody !== null
        ? (requestBody as { method?: unknown }).method
        : undefined;
    exchanges.push({
      url: String(input instanceof Request ? input.url : input),
      method: typeof method === 'string' ? method : undefined,
      requestHeaders: new Headers(init?.headers),
      requestBody,
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      body: res
        .clone()
        .text()
        .catch(() => ''),
    });
    return res;
  };
  return { fetch: tap, exchanges };
}

/** A fetch that adds `Authorization: Bearer <token>` to every request. */
export function bearerFetch(token: string, base: typeof fetch = globalThis.fetch): typeof fetch {
  return (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return base(input, { ...init, headers });
  };
}

/** The JSON objects of an SSE body's `data:` lines, with their `id:` (if any). */
export function sseEvents(body: string): Array<{ id: string | undefined; data: unknown }> {
  const out: Array<{ id: string | undefined; data: unknown }> = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) out.push({ id, data: JSON.parse(data.join('\n')) as unknown });
  }
  return out;
}

/** One JSON-RPC call with plain fetch (for set-up and for checking raw payloads). */
export async function rpc(
  server: Pick<RunningServer, 'rpcUrl' | 'token'>,
  method: string,
  params: unknown,
  opts: { version?: string | undefined; token?: string | undefined } = {},
): Promise<{
  status: number;
  body: { jsonrpc: string; id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
}> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${opts.token ?? server.token}`,
  };
  if (opts.version !== undefined) headers['a2a-version'] = opts.version;
  const res = await withTimeout(
    fetch(server.rpcUrl, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }),
    10_000,
    `${method} over plain fetch`,
  );
  return { status: res.status, body: (await res.json()) as never };
}

/** A unique message id with a conformance-actor behaviour prefix. */
export const mid = (prefix = 'interop'): string => `${prefix}-${randomBytes(6).toString('hex')}`;
