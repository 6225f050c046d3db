/**
 * Conformance details a third-party A2A client relies on: proto field names in requests, RFC 3339
 * timestamps with offsets, the extension's served versions. Run through the dispatcher (the one
 * pipeline both transports share).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../src/main/app.ts';
import { A2AClientError } from '../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../src/protocol/server/in-memory.transport.ts';
import { PassThrough } from 'node:stream';
import { LOCAL_PRINCIPAL, silentLogger } from '../../src/application/index.ts';
import { A2aStdioServer } from '../../src/protocol/server/stdio.server.ts';
import { tempDir } from '../support/harness.ts';

type TaskLike = { id: string; contextId: string; status: { state: string; timestamp?: string } };

describe('ProtoJSON field names and RFC 3339 timestamps', () => {
  let app: App;
  let rpc: InMemoryClientTransport;
  before(async () => {
    app = await buildApp({
      dataDir: tempDir(),
      inMemory: true,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
    rpc = new InMemoryClientTransport(app.dispatcher, () => app.card.publicCard('1.0').card, LOCAL_PRINCIPAL, '1.0');
  });
  after(async () => app.close());

  const send = async (params: unknown): Promise<TaskLike> =>
    ((await rpc.request('SendMessage', params)) as { task: TaskLike }).task;

  it('accepts a SendMessage written with proto names at every level', async () => {
    const task = await send({
      message: { message_id: 'proto-names-1', role: 'ROLE_USER', parts: [{ text: 'hello', media_type: 'text/plain' }] },
      configuration: { accepted_output_modes: ['text/plain'], history_length: 5, return_immediately: false },
    });
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    const again = await send({
      message: {
        message_id: 'proto-names-2',
        context_id: task.contextId,
        role: 'ROLE_USER',
        parts: [{ text: 'again' }],
      },
    });
    assert.equal(again.contextId, task.contextId, 'context_id was read');
  });

  it('reads GetTaskPushNotificationConfig {task_id, id} (was -32602) and answers with JSON names', async () => {
    const task = await send({ message: { messageId: 'proto-push', role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    const created = (await rpc.request('CreateTaskPushNotificationConfig', {
      task_id: task.id,
      id: 'hook',
      url: 'https://hooks.example.com/p',
      authentication: { scheme: 'Bearer', credentials: 's' },
    })) as Record<string, unknown>;
    assert.equal(created['taskId'], task.id);
    const got = (await rpc.request('GetTaskPushNotificationConfig', { task_id: task.id, id: 'hook' })) as Record<
      string,
      unknown
    >;
    assert.equal(got['taskId'], task.id);
    assert.equal(got['id'], 'hook');
    assert.ok(!('task_id' in got));
    const list = (await rpc.request('ListTaskPushNotificationConfigs', { task_id: task.id, page_size: 10 })) as {
      configs: unknown[];
    };
    assert.equal(list.configs.length, 1);
    assert.deepEqual(await rpc.request('DeleteTaskPushNotificationConfig', { task_id: task.id, id: 'hook' }), {});
  });

  it('reads GetTask {history_length} and ListTasks {context_id, page_size, include_artifacts, status_timestamp_after}', async () => {
    const task = await send({ message: { messageId: 'proto-list', role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    const got = (await rpc.request('GetTask', { id: task.id, history_length: 0 })) as { history?: unknown[] };
    assert.equal(got.history?.length ?? 0, 0);
    const list = (await rpc.request('ListTasks', {
      context_id: task.contextId,
      page_size: 1,
      include_artifacts: false,
      status_timestamp_after: '2000-01-01T00:00:00.000000+00:00',
    })) as { tasks: TaskLike[]; pageSize: number };
    assert.deepEqual(
      list.tasks.map((t) => t.id),
      [task.id],
    );
    assert.equal(list.pageSize, 1);
  });

  it('refuses a field given under both names with different values, naming it', async () => {
    await assert.rejects(rpc.request('GetTask', { id: 'a', historyLength: 1, history_length: 2 }), (e: unknown) => {
      assert.ok(e instanceof A2AClientError);
      assert.equal(e.code, -32602);
      assert.match(e.message, /historyLength/);
      return true;
    });
  });

  it('compares statusTimestampAfter as an instant, whatever its offset and precision', async () => {
    const task = await send({ message: { messageId: 'proto-ts', role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    const stamp = task.status.timestamp ?? '';
    const ms = Date.parse(stamp);
    const iso = (t: number, offsetMin: number, extra = ''): string => {
      const d = new Date(t + offsetMin * 60_000).toISOString().replace('Z', '');
      const sign = offsetMin < 0 ? '-' : '+';
      const a = Math.abs(offsetMin);
      return `${d}${extra}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
    };
    const ids = async (after: string): Promise<string[]> =>
      (
        (await rpc.request('ListTasks', { contextId: task.contextId, statusTimestampAfter: after })) as {
          tasks: TaskLike[];
        }
      ).tasks.map((t) => t.id);
    // The same instant written at +05:30 with microseconds: the task's own timestamp is "at or after".
    assert.deepEqual(await ids(iso(ms, 330, '000')), [task.id]);
    // One microsecond later, written at -08:00: the task is before it.
    assert.deepEqual(await ids(iso(ms, -480, '001')), []);
    // A minute earlier, with nine fractional digits.
    assert.deepEqual(await ids(iso(ms - 60_000, 60, '123456')), [task.id]);
  });
});

describe('extension versions', () => {
  let app: App;
  before(async () => {
    app = await buildApp({
      dataDir: tempDir(),
      inMemory: true,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
  });
  after(async () => app.close());

  const call = async (
    method: string,
    extensionVersion?: string,
  ): Promise<{ result?: unknown; error?: { code: number; message: string; data?: { type?: string } } }> => {
    const out = await app.dispatcher.dispatch(
      { jsonrpc: '2.0', id: 1, method, params: {} },
      { principal: LOCAL_PRINCIPAL, version: '1.0', signal: new AbortController().signal, extensionVersion },
    );
    assert.equal(out.kind, 'response');
    return (out as { response: { result?: unknown; error?: { code: number; message: string } } }).response;
  };

  it('declares the versions it serves, newest first, and what each added', () => {
    const card = app.card.publicCard('1.0').card as {
      capabilities: {
        extensions: Array<{
          uri: string;
          params: { version: string; versions: string[]; methods: string[]; addedIn: Record<string, string[]> };
        }>;
      };
    };
    const ext = card.capabilities.extensions.find((e) => e.uri === 'urn:cleveragents:extensions:v1');
    assert.ok(ext);
    assert.deepEqual(ext.params.versions, ['1.5', '1.4']);
    assert.equal(ext.params.version, '1.5');
    for (const m of ['grant', 'grants', 'revoke'])
      assert.ok(ext.params.addedIn['1.5']?.includes(`_cleveragents/namespace/${m}`), m);
    for (const m of ['fork', 'resume', 'compact'])
      assert.ok(ext.params.addedIn['1.4']?.includes(`_cleveragents/session/${m}`), m);
    assert.ok(!ext.params.addedIn['1.4']?.includes('_cleveragents/namespace/grant'));
    assert.ok(!ext.params.addedIn['1.3']?.includes('_cleveragents/session/fork'));
    assert.ok(ext.params.addedIn['1.3']?.includes('_cleveragents/whoami'));
    assert.ok(ext.params.addedIn['1.3']?.includes('_cleveragents/sync/pull'));
    assert.ok(ext.params.addedIn['1.2']?.includes('_cleveragents/context/show'));
    assert.ok(ext.params.addedIn['1.1']?.includes('_cleveragents/plan/list'));
    assert.ok(!ext.params.addedIn['1.2']?.includes('_cleveragents/whoami'));
    assert.ok(!ext.params.addedIn['1.1']?.includes('_cleveragents/context/show'));
    assert.ok(!ext.params.addedIn['1.1']?.includes('_cleveragents/health/check'));
  });

  it('serves 1.5 by default, 1.4 when asked, and no longer 1.3 (two minors back)', async () => {
    assert.ok((await call('_cleveragents/whoami')).result);
    assert.ok((await call('_cleveragents/whoami', '1.5')).result);
    assert.ok((await call('_cleveragents/whoami', '1.4')).result);
    assert.ok((await call('_cleveragents/plan/list', '1.4')).result);
    const old = await call('_cleveragents/namespace/grants', '1.4');
    assert.equal(old.error?.code, -32601, 'namespace/grants came with 1.5');
    assert.match(old.error?.message ?? '', /namespace\/grants/);
  });

  it('refuses a version it does not serve with -32007 (no fallback), and leaves standard methods alone', async () => {
    // 1.3 is two minors back: no longer served.
    for (const v of ['1.3', '1.2', '1.1', '1.0', '1.6', '2.0', 'banana']) {
      const r = await call('_cleveragents/health/check', v);
      assert.equal(r.error?.code, -32007, v);
      assert.equal(r.error?.data?.type, 'A2aVersionMismatchError');
    }
    const std = await call('ListTasks', '9.9');
    assert.ok(std.result, 'a standard method does not depend on the extension');
  });
});

describe('extension versions over stdio', () => {
  let app: App;
  before(async () => {
    app = await buildApp({ dataDir: tempDir(), inMemory: true, card: { endpoint: 'stdio://local', auth: 'none' } });
  });
  after(async () => app.close());

  /** Runs a handshake asking for `extensionVersion`, then the given methods; returns every answer by id. */
  async function session(
    extensionVersion: string,
    methods: string[],
  ): Promise<Map<number, { result?: Record<string, unknown>; error?: { code: number } }>> {
    const input = new PassThrough();
    const output = new PassThrough();
    let out = '';
    output.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const server = new A2aStdioServer({
      dispatcher: app.dispatcher,
      card: app.card,
      logger: silentLogger,
      serverInfo: { name: 't', version: '0' },
      input,
      output,
    });
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '1.0', extensions: ['urn:cleveragents:extensions:v1'], extensionVersion } })}\n`,
    );
    methods.forEach((m, i) => input.write(`${JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: m, params: {} })}\n`));
    input.end();
    await server.done;
    return new Map(
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: number; result?: Record<string, unknown>; error?: { code: number } })
        .map((r) => [r.id, r] as const),
    );
  }

  it('activates the version asked for in initialize and serves it', async () => {
    const r = await session('1.4', [
      '_cleveragents/health/check',
      '_cleveragents/session/fork',
      '_cleveragents/namespace/grants',
    ]);
    assert.equal(r.get(0)?.result?.['extensionVersion'], '1.4');
    assert.deepEqual(r.get(0)?.result?.['extensions'], ['urn:cleveragents:extensions:v1']);
    assert.ok(r.get(1)?.result);
    assert.ok(r.get(2)?.error?.code !== -32601, 'session/fork came with 1.4');
    assert.equal(r.get(3)?.error?.code, -32601, 'namespace/grants came with 1.5');
  });

  it('does not activate a version it does not serve, and its methods answer -32007', async () => {
    const r = await session('7.0', ['_cleveragents/health/check']);
    assert.deepEqual(r.get(0)?.result?.['extensions'], []);
    assert.equal(r.get(1)?.error?.code, -32007);
  });
});
