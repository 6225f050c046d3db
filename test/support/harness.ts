/**
 * Test harness: one A2A server per transport (in-memory, stdio subprocess, HTTP subprocess), each
 * reached through the same typed client, plus raw access for hostile-input tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE } from './paths.ts';
import { parseLogLines, type LogLine } from './log-lines.ts';

export { parseLogLines, startupErrorLine, type LogLine } from './log-lines.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { A2AClient, HttpClientTransport, StdioClientTransport } from '../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../src/protocol/server/in-memory.transport.ts';
import type { ProtocolVersion } from '../../src/protocol/a2a/versions.ts';
import { LOCAL_PRINCIPAL } from '../../src/application/index.ts';

export { eventually } from './eventually.ts';

export type TransportName = 'memory' | 'stdio' | 'http';
/** All three by default; CA_TRANSPORTS=memory,http narrows a local run. */
export const TRANSPORTS: readonly TransportName[] = (process.env['CA_TRANSPORTS']?.split(',') as
  TransportName[] | undefined) ?? ['memory', 'stdio', 'http'];

/** The built CLI entry point: the bundle the package's `agents` runs. */
export const BIN = BUNDLE;
export const TOKEN = 'contract-test-token-0123456789';

export interface Harness {
  name: TransportName;
  client: A2AClient;
  /** A second client speaking A2A v0.3. */
  connect: (version: ProtocolVersion) => Promise<A2AClient>;
  dataDir: string;
  /** HTTP only: the server's base URL. */
  baseUrl?: string;
  close(): Promise<void>;
}

export interface StartOptions {
  defaultActor?: string;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
}

export function tempDir(prefix = 'ca-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startHarness(name: TransportName, opts: StartOptions = {}): Promise<Harness> {
  const dataDir = opts.dataDir ?? tempDir();
  const owned = opts.dataDir === undefined;
  const cleanup = (): void => {
    if (owned) rmSync(dataDir, { recursive: true, force: true });
  };
  const env = { ...process.env, CLEVERAGENTS_VALIDATE_RESULTS: '1', ...opts.env };
  if (name === 'memory') {
    const app = await buildApp({
      dataDir,
      inMemory: true,
      defaultActor: opts.defaultActor,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
    const connect = async (version: ProtocolVersion): Promise<A2AClient> =>
      new A2AClient(memoryTransport(app, version));
    return {
      name,
      dataDir,
      client: await connect('1.0'),
      connect,
      close: async () => {
        await app.close();
        cleanup();
      },
    };
  }
  if (name === 'stdio') {
    const extraArgs = ['--data-dir', dataDir, ...(opts.defaultActor ? ['--default-actor', opts.defaultActor] : [])];
    const clients: A2AClient[] = [];
    const connect = async (version: ProtocolVersion): Promise<A2AClient> => {
      const c = new A2AClient(
        await StdioClientTransport.connect({
          args: [BIN, 'serve', '--stdio', ...extraArgs],
          env,
          protocolVersion: version,
        }),
      );
      clients.push(c);
      return c;
    };
    const client = await connect('1.0');
    return {
      name,
      dataDir,
      client,
      connect,
      close: async () => {
        await Promise.all(clients.map((c) => c.close()));
        cleanup();
      },
    };
  }
  const server = await startHttpServer({ dataDir, defaultActor: opts.defaultActor, env });
  const connect = async (version: ProtocolVersion): Promise<A2AClient> =>
    new A2AClient(new HttpClientTransport({ url: server.baseUrl, token: TOKEN, protocolVersion: version }));
  return {
    name,
    dataDir,
    baseUrl: server.baseUrl,
    client: await connect('1.0'),
    connect,
    close: async () => {
      await server.stop();
      cleanup();
    },
  };
}

function memoryTransport(app: App, version: ProtocolVersion): InMemoryClientTransport {
  return new InMemoryClientTransport(app.dispatcher, () => app.card.publicCard(version).card, LOCAL_PRINCIPAL, version);
}

export interface HttpServerProcess {
  baseUrl: string;
  port: number;
  child: ChildProcess;
  stderr: () => string;
  /** The server's log so far: its stderr, one JSON object per line (a line that is not one fails). */
  logLines: () => LogLine[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * What a test server's administrator allowlists for outbound requests: the fake LLMs, MCP servers
 * and webhook receivers the tests run on this machine. A test of the egress guard itself sets
 * CLEVERAGENTS_ALLOW_EGRESS to '' (or to what it needs) in the env it passes.
 */
export const TEST_EGRESS_ALLOWLIST = '127.0.0.1,localhost';

/**
 * Starts `agents serve` on a free loopback port and waits for its "listening on" log line. Unless
 * the env says otherwise, a SIGTERM stops it without the drain window (tests stop servers often).
 */
export async function startHttpServer(opts: {
  dataDir: string;
  defaultActor?: string | undefined;
  env?: NodeJS.ProcessEnv;
  args?: string[];
  token?: string | null;
}): Promise<HttpServerProcess> {
  const token = opts.token === undefined ? TOKEN : opts.token;
  const args = [
    BIN,
    'serve',
    '--port',
    '0',
    '--data-dir',
    opts.dataDir,
    ...(token ? ['--token', token] : []),
    ...(opts.defaultActor ? ['--default-actor', opts.defaultActor] : []),
    ...(opts.args ?? []),
  ];
  const env = {
    CLEVERAGENTS_ALLOW_EGRESS: TEST_EGRESS_ALLOWLIST,
    CLEVERAGENTS_DRAIN_WINDOW_MS: '0',
    ...(opts.env ?? process.env),
  };
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${err}`)), 15_000);
    const check = (): void => {
      let listening: LogLine | undefined;
      try {
        // Whole lines only: a line may arrive in pieces.
        listening = parseLogLines(err.slice(0, err.lastIndexOf('\n') + 1)).find(
          (l) => l.msg.startsWith('listening on') && typeof l['port'] === 'number',
        );
      } catch (notJson) {
        clearTimeout(timer);
        child.stderr?.off('data', check);
        child.kill('SIGKILL');
        return reject(notJson);
      }
      if (listening) {
        clearTimeout(timer);
        child.stderr?.off('data', check);
        resolve(listening['port'] as number);
      }
    };
    child.stderr?.on('data', check);
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${err}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    child,
    stderr: () => err,
    logLines: () => parseLogLines(err),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 8000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** Replaces ids, timestamps and correlation ids so results of different runs can be compared. */
export function normalize(value: unknown): unknown {
  const ids = new Map<string, string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (/^[0-9A-HJKMNP-TV-Z]{26}$/.test(v)) {
        if (!ids.has(v)) ids.set(v, `<id${ids.size}>`);
        return ids.get(v);
      }
      if (/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(v)) return '<time>';
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v)) return '<uuid>';
      return v
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
        .replace(/[0-9A-HJKMNP-TV-Z]{26}/g, (m) => {
          if (!ids.has(m)) ids.set(m, `<id${ids.size}>`);
          return ids.get(m) ?? m;
        });
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        if (k === 'uptimeSeconds' || k === 'liveTasks') continue;
        out[k] = walk((v as Record<string, unknown>)[k]);
      }
      return out;
    }
    return v;
  };
  return walk(value);
}
