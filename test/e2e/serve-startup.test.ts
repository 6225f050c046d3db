/**
 * `agents serve` as an operator starts it: every start-up problem is one clear log line (JSON, as
 * every line server mode prints) with a hint and exit code 2 (and a JSON envelope on stdout under
 * --format json), never a stack trace; the public URL shapes the
 * Agent Card, which leaks nothing internal.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { collect, type CliResult } from '../support/cli.ts';
import { BIN, startHttpServer, startupErrorLine, TOKEN } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-serve-e2e-'));
const GOOD_TOKEN = 'startup-token-0123456789abcdef';

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(ROOT, 'no-config'), NO_COLOR: '1' };
  for (const k of [
    'CLEVERAGENTS_SERVER_URL',
    'CLEVERAGENTS_SERVER_TOKEN',
    'CLEVERAGENTS_DATA_DIR',
    'CLEVERAGENTS_PUBLIC_URL',
    'CLEVERAGENTS_RETENTION_DAYS',
    'CLEVERAGENTS_DEFAULT_ACTOR',
  ])
    delete e[k];
  return { ...e, ...extra };
}

function serve(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env: env(extraEnv), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.end();
  return collect(child, { timeoutMs: 20_000 });
}

const STACK_FRAME = /^\s+at .+[(:]\d+/m;

/**
 * Exit 2, and on stderr exactly one log line (server mode's stderr is JSON lines): the error as its
 * message, the hint as a field, no stack frame.
 */
function assertOneLine(r: CliResult, message: RegExp): void {
  assert.equal(r.code, 2, `exit code (stderr: ${r.stderr})`);
  assert.doesNotMatch(r.stderr, STACK_FRAME, 'no stack trace');
  const line = startupErrorLine(r.stderr);
  assert.equal(line.level, 50, 'logged as an error');
  assert.match(line.msg, message);
  assert.match(line.hint, /\S/);
}

describe('agents serve start-up errors', { concurrency: 4 }, () => {
  let blocker: Server;
  let busyPort: number;
  before(async () => {
    blocker = createServer();
    busyPort = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
  });
  after(() => {
    blocker.close();
    rmSync(ROOT, { recursive: true, force: true });
  });
  const dir = (name: string): string => mkdtempSync(join(ROOT, `${name}-`));

  it('a token that is too short (was a stack trace)', async () => {
    assertOneLine(
      await serve(['serve', '--port', '0', '--token', 'abc', '--data-dir', dir('short')]),
      /token from --token is too short.*at least 16/,
    );
    assertOneLine(
      await serve(['serve', '--port', '0', '--data-dir', dir('short-env')], { CLEVERAGENTS_SERVER_TOKEN: 'abc' }),
      /CLEVERAGENTS_SERVER_TOKEN is too short/,
    );
  });

  it('under --format json: the envelope on stdout, exit 2', async () => {
    const r = await serve(['--format', 'json', 'serve', '--port', '0', '--token', 'abc', '--data-dir', dir('json')]);
    assert.equal(r.code, 2);
    const envl = JSON.parse(r.stdout) as {
      command: string;
      status: string;
      exitCode: number;
      data: { error: { type: string; message: string; hint: string } };
    };
    assert.equal(envl.command, 'serve');
    assert.equal(envl.status, 'error');
    assert.equal(envl.exitCode, 2);
    assert.equal(envl.data.error.type, 'StartupError');
    assert.match(envl.data.error.message, /too short/);
    assert.ok(envl.data.error.hint);
    assert.doesNotMatch(r.stderr, STACK_FRAME);
  });

  it('a port already in use (was a stack trace)', async () => {
    assertOneLine(
      await serve(['serve', '--port', String(busyPort), '--token', GOOD_TOKEN, '--data-dir', dir('busy')]),
      new RegExp(`127\\.0\\.0\\.1:${busyPort}: the port is already in use`),
    );
  });

  it('a host that does not resolve', async () => {
    assertOneLine(
      await serve([
        'serve',
        '--host',
        'no-such-host.invalid',
        '--port',
        '0',
        '--token',
        GOOD_TOKEN,
        '--data-dir',
        dir('host'),
      ]),
      /no-such-host\.invalid/,
    );
  });

  it('a corrupt database, over HTTP and over stdio (stdout stays clean for the protocol)', async () => {
    const d = dir('corrupt');
    writeFileSync(
      join(d, 'cleveragents.db'),
      'this is not a database at all, just some text long enough to be looked at\n'.repeat(20),
    );
    assertOneLine(
      await serve(['serve', '--port', '0', '--token', GOOD_TOKEN, '--data-dir', d]),
      /corrupt or not a CleverAgents database/,
    );
    const stdio = await serve(['--format', 'json', 'serve', '--stdio', '--data-dir', d]);
    assert.equal(stdio.code, 2);
    assert.equal(stdio.stdout, '', 'nothing but protocol on stdout');
    assert.match(stdio.stderr, /"type": "StartupError"/);
    assert.doesNotMatch(stdio.stderr, STACK_FRAME);
  });

  it('a data directory that is not a directory', async () => {
    const d = dir('notdir');
    writeFileSync(join(d, 'file'), 'x');
    assertOneLine(
      await serve(['serve', '--port', '0', '--token', GOOD_TOKEN, '--data-dir', join(d, 'file', 'state')]),
      /data directory is not a directory/,
    );
  });

  it('an unknown default actor', async () => {
    assertOneLine(
      await serve([
        'serve',
        '--port',
        '0',
        '--token',
        GOOD_TOKEN,
        '--data-dir',
        dir('actor'),
        '--default-actor',
        'nope/missing',
      ]),
      /default actor nope\/missing cannot be used/,
    );
  });

  it('bad values: public URL, retention from the environment, a flag', async () => {
    assertOneLine(
      await serve([
        'serve',
        '--port',
        '0',
        '--token',
        GOOD_TOKEN,
        '--data-dir',
        dir('url'),
        '--public-url',
        'ftp://example.com',
      ]),
      /public URL must use http or https/,
    );
    assertOneLine(
      await serve(['serve', '--port', '0', '--token', GOOD_TOKEN, '--data-dir', dir('ret')], {
        CLEVERAGENTS_RETENTION_DAYS: 'soon',
      }),
      /CLEVERAGENTS_RETENTION_DAYS must be a whole number/,
    );
    const flag = await serve(['serve', '--port', '0', '--token', GOOD_TOKEN, '--retention-days', '-1']);
    assert.equal(flag.code, 2);
    assert.doesNotMatch(flag.stderr, STACK_FRAME);
  });
});

describe('agents serve --public-url', () => {
  it('puts the public URL in the Agent Card, declares bearer auth, and leaks no bind address, path or token hint', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agents-public-url-'));
    const server = await startHttpServer({
      dataDir,
      env: env(),
      args: ['--public-url', 'https://agents.example.com/team/'],
    });
    try {
      for (const version of ['1.0', undefined]) {
        const res = await fetch(`${server.baseUrl}/.well-known/agent-card.json`, {
          headers: version ? { 'A2A-Version': version } : {},
        });
        const text = await res.text();
        const card = JSON.parse(text) as {
          supportedInterfaces: Array<{ url: string }>;
          securitySchemes: Record<string, unknown>;
          securityRequirements?: unknown[];
          url?: string;
        };
        assert.deepEqual(
          card.supportedInterfaces.map((i) => i.url),
          ['https://agents.example.com/team/a2a', 'https://agents.example.com/team/a2a'],
          text,
        );
        if (!version) assert.equal(card.url, 'https://agents.example.com/team/a2a');
        assert.ok(card.securitySchemes['bearer'], 'bearer scheme declared');
        assert.doesNotMatch(text, /127\.0\.0\.1|localhost/, 'no bind address');
        assert.ok(!text.includes(dataDir), 'no data dir');
        assert.doesNotMatch(text, /CLEVERAGENTS_|server-token|printed/, 'no token hints');
      }
      // The served extension version is echoed to a client that activates the extension.
      const rpc = await fetch(`${server.baseUrl}/a2a`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${TOKEN}`,
          'A2A-Version': '1.0',
          'A2A-Extensions': 'urn:cleveragents:extensions:v1',
          // The version before the current one is still served.
          'CleverAgents-Extension-Version': '1.4',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_cleveragents/health/check', params: {} }),
      });
      assert.equal(rpc.headers.get('cleveragents-extension-version'), '1.4');
      assert.ok(((await rpc.json()) as { result?: unknown }).result);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
