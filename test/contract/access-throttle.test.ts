/**
 * The HTTP server throttles clients that keep presenting wrong tokens (429 + Retry-After, without
 * checking the token), and both transports write one structured access log line per request.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, type Logger } from '../../src/application/index.js';
import { buildApp, type App } from '../../src/main/app.js';
import { AuthThrottle } from '../../src/protocol/server/auth.js';
import { A2aStdioServer } from '../../src/protocol/server/stdio.server.js';
import { eventually, startHttpServer, TOKEN, type HttpServerProcess } from '../support/harness.js';

describe('AuthThrottle', () => {
  it('refuses a client after N failures within the window, until the window ends', () => {
    let now = 1_000_000;
    const t = new AuthThrottle({ maxFailures: 3, windowMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) {
      assert.equal(t.retryAfter('a'), 0);
      t.failed('a');
    }
    assert.equal(t.retryAfter('a'), 60);
    assert.equal(t.retryAfter('b'), 0, 'another client is not affected');
    now += 45_000;
    assert.equal(t.retryAfter('a'), 15);
    now += 15_000;
    assert.equal(t.retryAfter('a'), 0, 'the window ended');
    assert.equal(t.size, 0, 'and its entry expired');
  });
  it('forgets a client that authenticates', () => {
    const t = new AuthThrottle({ maxFailures: 2 });
    t.failed('a');
    t.succeeded('a');
    t.failed('a');
    assert.equal(t.retryAfter('a'), 0);
  });
  it('keeps its table bounded whatever the number of clients', () => {
    let now = 0;
    const t = new AuthThrottle({ maxFailures: 1, maxClients: 100, now: () => now });
    for (let i = 0; i < 10_000; i++) {
      t.failed(`10.0.${i >> 8}.${i & 255}`);
      now += 1;
    }
    assert.ok(t.size <= 100, `size ${t.size}`);
    assert.ok(t.retryAfter('10.0.39.15') > 0, 'the newest clients are still throttled');
  });
});

describe('HTTP: auth throttle and access log', () => {
  let server: HttpServerProcess;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ca-throttle-'));
    server = await startHttpServer({ dataDir, env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '5' } });
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const post = (body: unknown, token: string | undefined) =>
    fetch(`${server.baseUrl}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
  const accessLines = (): Array<Record<string, unknown>> =>
    server
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r['msg'] === 'request');

  it('logs one line per request with method, principal, outcome, status, duration and the correlation id the client saw', async () => {
    const ok = await post({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, TOKEN);
    assert.equal(ok.status, 200);
    const missing = (await (
      await post({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'no-such-task' } }, TOKEN)
    ).json()) as {
      error: { code: number; data: Array<{ metadata?: { correlationId?: string } }> | { correlationId?: string } };
    };
    const data = missing.error.data;
    const cid = Array.isArray(data) ? data.map((d) => d.metadata?.correlationId).find(Boolean) : data.correlationId;
    assert.ok(cid, `a correlation id in error.data: ${JSON.stringify(missing)}`);
    // The line is written once the answer is out: wait for it on the server's stderr.
    const lines = await eventually(
      () => {
        const l = accessLines();
        return Promise.resolve(l.some((r) => r['method'] === 'GetTask') ? l : undefined);
      },
      5000,
      'the access log lines',
    );
    const okLine = lines.find((r) => r['method'] === 'ListTasks');
    assert.ok(okLine, server.stderr());
    assert.equal(okLine['level'], 30, 'info level');
    assert.equal(okLine['outcome'], 'ok');
    assert.equal(okLine['status'], 200);
    // The server token is the key of the administrator the first start made.
    assert.equal(okLine['principal'], 'admin');
    assert.equal(typeof okLine['ms'], 'number');
    assert.equal(typeof okLine['correlationId'], 'string');
    const errLine = lines.find((r) => r['method'] === 'GetTask');
    assert.ok(errLine);
    assert.equal(errLine['outcome'], missing.error.code);
    assert.equal(errLine['correlationId'], cid);
    assert.equal(lines.filter((r) => r['method'] === 'GetTask').length, 1, 'one line per request');
  });

  it('answers 429 with Retry-After and a JSON-RPC error after too many wrong tokens, without checking the token', async () => {
    // A request without credentials is refused but is not a guess.
    for (let i = 0; i < 8; i++)
      assert.equal((await post({ jsonrpc: '2.0', id: i, method: 'ListTasks' }, undefined)).status, 401);
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await post({ jsonrpc: '2.0', id: i, method: 'ListTasks' }, 'wrong-token-wrong-token')).status,
        401,
        `failure ${i + 1}`,
      );
    const limited = await post({ jsonrpc: '2.0', id: 99, method: 'ListTasks' }, 'wrong-token-wrong-token');
    assert.equal(limited.status, 429);
    const wait = Number(limited.headers.get('retry-after'));
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After: ${wait}`);
    const body = (await limited.json()) as { jsonrpc: string; id: number; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, 99);
    assert.match(body.error.message, /Too many failed authentication attempts/);
    // Even the right token is not looked at while the client is throttled.
    assert.equal((await post({ jsonrpc: '2.0', id: 100, method: 'ListTasks' }, TOKEN)).status, 429);
    const line = await eventually(
      () => Promise.resolve(accessLines().find((r) => r['status'] === 429)),
      5000,
      'the 429 access line (the refusal is logged)',
    );
    assert.equal(line['principal'], undefined);
    // The server is otherwise fine.
    assert.equal((await fetch(`${server.baseUrl}/health`)).status, 200);
  });
});

describe('stdio: access log', () => {
  let app: App;
  before(async () => {
    app = await buildApp({
      dataDir: mkdtempSync(join(tmpdir(), 'ca-stdio-log-')),
      inMemory: true,
      card: { endpoint: 'stdio://local', auth: 'none' },
    });
  });
  after(async () => app.close());

  it('logs one line per request through the logger (stderr), and writes only protocol to stdout', async () => {
    const records: Array<Record<string, unknown>> = [];
    const logger: Logger = {
      debug() {},
      warn() {},
      error() {},
      info: (o, msg) => void (msg === 'request' && records.push({ ...(o as Record<string, unknown>) })),
    };
    const input = new PassThrough();
    const output = new PassThrough();
    let out = '';
    output.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const server = new A2aStdioServer({
      dispatcher: app.dispatcher,
      card: app.card,
      logger,
      serverInfo: { name: 't', version: '0' },
      input,
      output,
      principal: LOCAL_PRINCIPAL,
    });
    input.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1.0"}}\n');
    input.write('{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}\n');
    input.write('{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"nope"}}\n');
    input.end();
    await server.done;
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; error?: { code: number; data: unknown } });
    assert.ok(
      lines.every((l) => 'id' in l),
      'only JSON-RPC on stdout',
    );
    const err = lines.find((l) => l.id === 2)?.error;
    assert.ok(err);
    assert.equal(records.length, 2);
    assert.deepEqual(
      records.map((r) => [r['transport'], r['method'], r['principal'], r['outcome']]),
      [
        ['stdio', 'ListTasks', 'local', 'ok'],
        ['stdio', 'GetTask', 'local', err.code],
      ],
    );
    assert.ok(
      JSON.stringify(err.data).includes(String(records[1]?.['correlationId'])),
      'the correlation id the client saw',
    );
  });
});
