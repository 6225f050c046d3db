/**
 * `agents serve` as an operator runs it for a team (issue #40, "What operators expect"): the
 * client's request id goes through (answer header, access log, error.data), the client's address
 * is read from X-Forwarded-For only on connections from a trusted proxy (and the failed-login
 * throttle keys on it), every line the server prints is one JSON object, and SIGTERM drains:
 * /ready 503 while requests are still served, running turns finish, open streams get a last
 * event that says why they end.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { readSse } from '../../src/protocol/client/sse.ts';
import {
  BIN,
  eventually,
  parseLogLines,
  startHttpServer,
  startupErrorLine,
  tempDir,
  TOKEN,
  type HttpServerProcess,
  type LogLine,
} from '../support/harness.ts';
import { postFrom, type Answer } from '../support/post-from.ts';
import { collect } from '../support/cli.ts';
import { spawn } from 'node:child_process';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The correlation id of an A2A 1.0 error answer (its ErrorInfo detail's metadata). */
function correlationIdOf(a: Answer): unknown {
  const data = a.body.error?.data as Array<{ metadata?: { correlationId?: string } }> | undefined;
  return data?.[0]?.metadata?.correlationId;
}

const getTaskCall = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } };

/** The access log line of the request with this id, once it is written. */
function accessLine(server: HttpServerProcess, requestId: string): Promise<LogLine> {
  return eventually(
    async () => server.logLines().find((l) => l.msg === 'request' && l['requestId'] === requestId),
    5000,
    `the access log line of request ${requestId}`,
  );
}

describe('agents serve: request ids and client addresses', () => {
  let server: HttpServerProcess;
  let dataDir: string;
  before(async () => {
    dataDir = tempDir('ca-ops-origin-');
    server = await startHttpServer({
      dataDir,
      args: ['--trust-proxy', '127.0.0.2'],
      env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '2' },
    });
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("echoes the client's X-Request-Id in the answer's header, its access log line and error.data", async () => {
    const id = 'deploy-42/req:7 abc';
    const a = await postFrom(
      server.baseUrl,
      '127.0.0.1',
      { authorization: `Bearer ${TOKEN}`, 'x-request-id': id },
      getTaskCall,
    );
    assert.equal(a.headers['x-request-id'], id);
    assert.equal(a.body.error?.code, -32001, 'GetTask of an unknown task is TaskNotFound');
    assert.equal(correlationIdOf(a), id, 'one id per request: the correlation id is the request id');
    const line = await accessLine(server, id);
    assert.equal(line['method'], 'GetTask');
    assert.equal(line['correlationId'], id);
    assert.equal(line['client'], '127.0.0.1');
  });

  it('replaces a request id that is too long or not printable ASCII, and makes one when none is sent', async () => {
    for (const given of ['x'.repeat(129), 'tab\there', 'caf\u00e9', undefined]) {
      const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
      if (given !== undefined) headers['x-request-id'] = given;
      const a = await postFrom(server.baseUrl, '127.0.0.1', headers, getTaskCall);
      const made = a.headers['x-request-id'];
      assert.match(String(made), UUID, `a made id for ${JSON.stringify(given)}`);
      assert.equal(correlationIdOf(a), made);
      await accessLine(server, String(made));
    }
    const longest = 'y'.repeat(128);
    const kept = await postFrom(
      server.baseUrl,
      '127.0.0.1',
      { authorization: `Bearer ${TOKEN}`, 'x-request-id': longest },
      getTaskCall,
    );
    assert.equal(kept.headers['x-request-id'], longest, '128 characters are kept');
  });

  it('reads the client address from X-Forwarded-For only on a connection from a trusted proxy', async () => {
    const from = async (socket: string, forwarded: string): Promise<unknown> => {
      const requestId = randomUUID();
      await postFrom(
        server.baseUrl,
        socket,
        { authorization: `Bearer ${TOKEN}`, 'x-request-id': requestId, 'x-forwarded-for': forwarded },
        getTaskCall,
      );
      return (await accessLine(server, requestId))['client'];
    };
    assert.equal(await from('127.0.0.2', '198.51.100.7'), '198.51.100.7', 'the proxy names the client');
    assert.equal(
      await from('127.0.0.2', '10.9.9.9, 198.51.100.7, 127.0.0.2'),
      '198.51.100.7',
      'the right-most hop that is not a trusted proxy (left of it may be forged)',
    );
    assert.equal(await from('127.0.0.3', '198.51.100.8'), '127.0.0.3', 'an untrusted sender cannot name itself');
    assert.equal(await from('127.0.0.2', 'not-an-address'), '127.0.0.2', 'garbage leaves the socket address');
  });

  it('throttles failed logins per forwarded client behind the proxy, and per socket for untrusted senders', async () => {
    const wrong = (socket: string, forwarded: string): Promise<Answer> =>
      postFrom(
        server.baseUrl,
        socket,
        { authorization: 'Bearer wrong-token-wrong-token', 'x-forwarded-for': forwarded },
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } },
      );
    // Two clients behind one proxy: the first one's guesses do not lock out the second.
    assert.equal((await wrong('127.0.0.2', '203.0.113.1')).status, 401);
    assert.equal((await wrong('127.0.0.2', '203.0.113.1')).status, 401);
    assert.equal((await wrong('127.0.0.2', '203.0.113.1')).status, 429, 'the third guess of 203.0.113.1');
    assert.equal((await wrong('127.0.0.2', '203.0.113.2')).status, 401, 'another client behind the same proxy');
    // A sender that is not a proxy cannot escape its count by writing another X-Forwarded-For.
    assert.equal((await wrong('127.0.0.4', '192.0.2.1')).status, 401);
    assert.equal((await wrong('127.0.0.4', '192.0.2.2')).status, 401);
    assert.equal((await wrong('127.0.0.4', '192.0.2.3')).status, 429);
  });
});

describe('agents serve: every line on stderr is one JSON object', () => {
  it('at start (the generated token shown once), for requests and at stop', async () => {
    const dataDir = tempDir('ca-ops-lines-');
    try {
      const server = await startHttpServer({
        dataDir,
        token: null,
        args: ['--trust-proxy', '10.0.0.0/8', '--allow-egress', 'ollama.internal:11434'],
      });
      await fetch(`${server.baseUrl}/ready`);
      assert.equal(await server.stop('SIGTERM'), 0);
      const lines = parseLogLines(server.stderr());
      const generated = lines.find((l) => l.msg.startsWith('Generated a server token'));
      assert.ok(generated, 'the generated token is announced');
      assert.match(String(generated['token']), /^\S{16,}$/, 'with the token to use');
      assert.ok(generated.msg.includes(String(generated['token'])));
      assert.ok(lines.some((l) => l.msg.startsWith('listening on') && typeof l['port'] === 'number'));
      assert.ok(lines.some((l) => l['signal'] === 'SIGTERM'));
      assert.equal(lines.at(-1)?.msg, 'stopped');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a start-up error is one JSON line with its hint, exit code 2', async () => {
    const dataDir = tempDir('ca-ops-startup-');
    try {
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--token', 'abc', '--data-dir', dataDir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const r = await collect(child, { timeoutMs: 20_000 });
      assert.equal(r.code, 2, r.stderr);
      const lines = parseLogLines(r.stderr);
      assert.equal(lines.length, 1, r.stderr);
      assert.equal(lines[0]?.level, 50);
      assert.match(lines[0]?.msg ?? '', /token from --token is too short/);
      assert.match(String(lines[0]?.['hint']), /\S/);
      assert.equal(lines[0]?.['type'], 'StartupError');
      const run = async (args: string[], env: NodeJS.ProcessEnv = {}) =>
        collect(
          spawn(process.execPath, [BIN, 'serve', '--port', '0', '--token', TOKEN, '--data-dir', dataDir, ...args], {
            stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, ...env },
          }),
          { timeoutMs: 20_000 },
        );
      const proxy = await run(['--trust-proxy', 'proxy.internal']);
      assert.equal(proxy.code, 2, proxy.stderr);
      assert.match(
        startupErrorLine(proxy.stderr).msg,
        /--trust-proxy: "proxy\.internal" is not an IP address or CIDR range/,
      );
      const window = await run([], { CLEVERAGENTS_DRAIN_WINDOW_MS: 'soon' });
      assert.equal(window.code, 2, window.stderr);
      assert.match(startupErrorLine(window.stderr).msg, /CLEVERAGENTS_DRAIN_WINDOW_MS must be a whole number/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

const v1 = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' };

async function rpc(base: string, method: string, params: unknown): Promise<any> {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: v1,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}

const send = (base: string, messageId: string): Promise<any> =>
  rpc(base, 'SendMessage', { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'go' }] } });

describe('agents serve: graceful drain on SIGTERM', () => {
  it('answers /ready 503 but keeps serving for the window, lets a running turn finish, and ends open streams saying why', async () => {
    const dataDir = tempDir('ca-ops-drain-');
    const env = {
      ...process.env,
      CLEVERAGENTS_CONFORMANCE_STEP_MS: '600',
      CLEVERAGENTS_DRAIN_WINDOW_MS: '2500',
    };
    const server = await startHttpServer({
      dataDir,
      env,
      defaultActor: 'builtin/conformance',
      args: ['--drain-ms', '10000'],
    });
    try {
      // A task waiting for input, and a subscriber to it: its stream stays open through the drain.
      const waiting = await send(server.baseUrl, `tck-input-required-${randomUUID()}`);
      assert.equal(waiting.result?.task?.status?.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(waiting));
      const res = await fetch(`${server.baseUrl}/a2a`, {
        method: 'POST',
        headers: { ...v1, accept: 'text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'SubscribeToTask',
          params: { id: waiting.result.task.id },
        }),
      });
      assert.ok(res.body);
      const events = readSse(res.body)[Symbol.asyncIterator]();
      assert.ok(JSON.parse((await events.next()).value?.data ?? '{}').result?.task, 'the stream began with the task');

      // A turn of 5 steps of 600 ms: it is still running when accepting stops (after 2.5 s).
      const blocked = send(server.baseUrl, `tck-long-running-${randomUUID()}`);
      await eventually(
        async () =>
          (await rpc(server.baseUrl, 'ListTasks', { status: 'TASK_STATE_WORKING' })).result?.tasks?.length
            ? true
            : undefined,
        5000,
        'the turn to start',
      );
      const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)));
      server.child.kill('SIGTERM');

      await eventually(
        async () => ((await fetch(`${server.baseUrl}/ready`)).status === 503 ? true : undefined),
        5000,
        '/ready to answer 503',
      );
      const during = await rpc(server.baseUrl, 'GetTask', { id: waiting.result.task.id });
      assert.equal(during.result?.id, waiting.result.task.id, 'a request is still served in the window');

      const answer = await blocked;
      assert.equal(answer.result?.task?.status?.state, 'TASK_STATE_COMPLETED', 'the running turn finished');

      const last = await events.next();
      assert.ok(!last.done, 'the stream got a last event');
      const farewell = JSON.parse(last.value.data) as { id: number; error?: { message: string; data: any[] } };
      assert.equal(farewell.id, 7);
      assert.match(farewell.error?.message ?? '', /server is shutting down; resubscribe with SubscribeToTask/);
      assert.equal(farewell.error?.data[0]?.reason, 'UNAVAILABLE');
      assert.ok((await events.next()).done, 'then the stream ends');

      assert.equal(await exited, 0);
      const lines = parseLogLines(server.stderr());
      const order = ['shutting down', 'no longer accepting', 'stopped'].map((m) =>
        lines.findIndex((l) => l.msg.startsWith(m)),
      );
      assert.ok(
        order.every((i, k) => i >= 0 && (k === 0 || i > (order[k - 1] ?? 0))),
        `drain steps in order: ${order.join(', ')}`,
      );
    } finally {
      await server.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
