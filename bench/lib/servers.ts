/** Starting the servers under test: ours (`agents serve`), the reference, the floors. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_TOKEN } from '../servers/workload.ts';
import { startServer, type Server } from './proc.ts';

/**
 * The bench runs from its TypeScript sources (`node bench/run.ts`, Node strips the types) or from
 * tsc's output (`node dist/bench/run.js`); either way its helper servers are spawned from the same
 * tree as this file, and the server under test is the built bundle, which is what ships.
 */
const FROM_DIST = import.meta.url.endsWith('.js');
const BENCH = fileURLToPath(new URL('../', import.meta.url));
/** The repository's root. */
export const ROOT = fileURLToPath(new URL(FROM_DIST ? '../../../' : '../../', import.meta.url));
/** tsc's and the bundler's output, where the run's report is written too. */
export const DIST = join(ROOT, 'dist');
/** What the package's `agents` runs: the bundle. */
export const BIN = join(DIST, 'src/bundle/agents.js');
/** A script of the bench, by its path under bench/ without extension: `lib/fake-llm-server`. */
export const benchScript = (path: string): string => join(BENCH, `${path}${FROM_DIST ? '.js' : '.ts'}`);
const script = (name: string): string => benchScript(`servers/${name}`);
const LISTENING = /listening on (?:http:\/\/)?127\.0\.0\.1:(\d+)/;

export const tempDir = (tag: string): string => mkdtempSync(join(tmpdir(), `ca-bench-${tag}-`));

/** `agents serve` over HTTP, as an operator runs it (logs at the default level). */
export function startOurs(dataDir: string, defaultActor?: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Server> {
  const args = [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--token', BENCH_TOKEN, '--data-dir', dataDir];
  if (defaultActor) args.push('--default-actor', defaultActor);
  // Stopped at once: the drain window (a balancer's time to notice /ready) has no balancer to wait for here.
  const env: NodeJS.ProcessEnv = { ...process.env, CLEVERAGENTS_DRAIN_WINDOW_MS: '0', ...extraEnv };
  delete env['CLEVERAGENTS_VALIDATE_RESULTS'];
  return startServer({ name: 'ours', args, env, portPattern: LISTENING, timeoutMs: 120_000 });
}

/** Our server with the bench streaming actor as default (see servers/ours-stream.ts). */
export function startOursStream(dataDir: string, extraEnv?: NodeJS.ProcessEnv): Promise<Server> {
  return startServer({
    name: 'ours',
    args: [script('ours-stream'), dataDir, BENCH_TOKEN],
    portPattern: LISTENING,
    ...(extraEnv ? { env: { ...process.env, ...extraEnv } } : {}),
  });
}

/** Our server with the single shared token of before accounts (the auth workload's baseline). */
export function startOursSingleToken(dataDir: string): Promise<Server> {
  return startServer({
    name: 'single-token',
    args: [script('single-token'), dataDir, BENCH_TOKEN],
    portPattern: LISTENING,
  });
}

/** `agents serve` with an OIDC issuer (and API keys, as always). */
export function startOursWithOidc(dataDir: string, issuer: string, audience: string): Promise<Server> {
  const args = [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--token', BENCH_TOKEN, '--data-dir', dataDir];
  args.push('--oidc-issuer', issuer, '--oidc-audience', audience);
  const env: NodeJS.ProcessEnv = { ...process.env, CLEVERAGENTS_DRAIN_WINDOW_MS: '0' };
  delete env['CLEVERAGENTS_VALIDATE_RESULTS'];
  return startServer({ name: 'ours', args, env, portPattern: LISTENING, timeoutMs: 120_000 });
}

export function startReference(): Promise<Server> {
  return startServer({ name: 'reference', args: [script('reference')], portPattern: LISTENING });
}

export function startFloor(): Promise<Server> {
  return startServer({ name: 'floor', args: [script('floor')], portPattern: LISTENING });
}

/** The persisted floor (servers/persisted-floor.ts), its SQLite file in `dataDir`. */
export function startPersistedFloor(dataDir: string): Promise<Server> {
  return startServer({ name: 'persisted floor', args: [script('persisted-floor'), dataDir], portPattern: LISTENING });
}

export const stdioEchoScript = (): string => script('stdio-echo');
