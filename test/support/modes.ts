/**
 * The end-to-end scaffold: a temporary root for a test file, and a story run once in local mode
 * (the CLI spawns its agent over stdio per call) and once against `agents serve` (the CLI talks
 * HTTP to one server), each in a describe of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { agentsCli, cliEnv, type Agents, type AgentsOptions } from './cli.ts';
import { startHttpServer, type HttpServerProcess } from './harness.ts';

/** A fresh directory under the system's temp dir, removed when the file's tests are done. */
export function e2eRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  after(() => rmSync(root, { recursive: true, force: true }));
  return root;
}

export type ModeName = 'local' | 'server';

/** One mode of a story: its name and the CLI as its user. */
export interface Mode {
  name: ModeName;
  cli: Agents;
}

export interface ModeOptions {
  /** The test file's root (see {@link e2eRoot}); each mode keeps its directories under it. */
  root: string;
  /** Added to the environment of every CLI run and of the server. */
  env?: NodeJS.ProcessEnv;
  /** The server's token, which the CLI passes with `--token`. */
  token?: string;
  cli?: Pick<AgentsOptions, 'cwd' | 'timeoutMs'>;
}

const SERVER_TOKEN = 'e2e-server-token-0123456789abcdefgh';

/** Local mode: the CLI's data directory is the agent's (`<root>/local`). */
export function localMode(o: ModeOptions): Mode {
  const dataDir = join(o.root, 'local');
  const cli = agentsCli({ dataDir, configHome: join(o.root, 'no-config'), env: o.env ?? {}, ...o.cli });
  return { name: 'local', cli };
}

/**
 * Server mode: registers, in the current describe, a `before` that starts `agents serve` on
 * `<root>/server` and an `after` that stops it; the CLI (`<root>/server-client`) passes
 * `--server <url> --token <token>` before every command.
 */
export function serverMode(o: ModeOptions): Mode {
  const dataDir = join(o.root, 'server');
  const token = o.token ?? SERVER_TOKEN;
  let server: HttpServerProcess | undefined;
  const running = (): HttpServerProcess => {
    if (!server) throw new Error('the server is not running (used before its describe started it?)');
    return server;
  };
  before(async () => {
    server = await startHttpServer({
      dataDir,
      token,
      env: cliEnv(dataDir, join(o.root, 'no-config'), o.env),
    });
  });
  after(() => server?.stop());
  const cli = agentsCli({
    dataDir: join(o.root, 'server-client'),
    configHome: join(o.root, 'no-config'),
    env: o.env ?? {},
    prefix: () => ['--server', running().baseUrl, '--token', token],
    ...o.cli,
  });
  return { name: 'server', cli };
}

/**
 * The same story in both modes: `describe('<title> (local mode)')` and `describe('<title> (server
 * mode)')`, each calling `story` with its mode. The server starts before the story's own hooks.
 */
export function inBothModes(title: string, o: ModeOptions, story: (mode: Mode) => void): void {
  describe(`${title} (local mode)`, () => story(localMode(o)));
  describe(`${title} (server mode)`, () => story(serverMode(o)));
}
