/** Hostile and malformed input over HTTP: each gets the right error, and the server keeps serving. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.ts';
import { rmSync } from 'node:fs';

let server: HttpServerProcess;
let dir: string;
let base: string;

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' };
const post = (body: string | Buffer, headers: Record<string, string> = auth, path = '/a2a'): Promise<Response> =>
  fetch(`${base}${path}`, { method: 'POST', headers, body });
const rpc = async (body: unknown, headers: Record<string, string> = auth): Promise<{ status: number; json: any }> => {
  const res = await post(typeof body === 'string' ? body : JSON.stringify(body), headers);
  return { status: res.status, json: await res.json() };
};
const dataType = (json: any): string =>
  Array.isArray(json.error?.data) ? json.error.data[0].metadata.type : json.error?.data?.type;

describe('hostile input over HTTP', () => {
  before(async () => {
    dir = tempDir();
    server = await startHttpServer({ dataDir: dir, args: ['--max-body-bytes', '65536'] });
    base = server.baseUrl;
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a request without a token with 401 and a JSON-RPC error', async () => {
    const res = await post('{"jsonrpc":"2.0","id":1,"method":"ListTasks"}', { 'content-type': 'application/json' });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    const json: any = await res.json();
    // A standard operation: a custom code, not one of the A2A task codes (-32002 is TaskNotCancelable).
    assert.equal(json.error.code, -32040);
    assert.equal(json.error.data.type, 'AuthenticationError');
    const v1 = (await (
      await post('{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"x"}}', {
        'content-type': 'application/json',
        'a2a-version': '1.0',
      })
    ).json()) as any;
    assert.equal(v1.id, 2);
    assert.equal(v1.error.code, -32040);
    assert.equal(v1.error.data[0].reason, 'UNAUTHENTICATED');
    // An extension method: the platform taxonomy's -32002.
    const ext = (await (
      await post('{"jsonrpc":"2.0","id":3,"method":"_cleveragents/health/check"}', {
        'content-type': 'application/json',
      })
    ).json()) as any;
    assert.equal(ext.error.code, -32002);
    assert.equal(ext.error.data.type, 'AuthenticationError');
  });

  it('refuses a wrong token and a malformed Authorization header', async () => {
    for (const authorization of [
      'Bearer wrong-token-wrong-token',
      'Basic dXNlcjpwYXNz',
      `Bearer ${TOKEN} extra`,
      'Bearer',
    ]) {
      const res = await post('{"jsonrpc":"2.0","id":1,"method":"ListTasks"}', { ...auth, authorization });
      assert.equal(res.status, 401, authorization);
    }
  });

  it('answers malformed JSON with -32700', async () => {
    const { status, json } = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.equal(status, 200);
    assert.equal(json.error.code, -32700);
    assert.equal(json.id, null);
  });

  it('answers envelope problems with -32600, echoing the id when it can', async () => {
    const cases: Array<[unknown, unknown]> = [
      [{ id: 7, method: 'ListTasks' }, 7],
      [{ jsonrpc: '1.0', id: 'a', method: 'ListTasks' }, 'a'],
      [{ jsonrpc: '2.0', id: 3, method: 42 }, 3],
      [{ jsonrpc: '2.0', id: { x: 1 }, method: 'ListTasks' }, null],
      [{ jsonrpc: '2.0', id: 4, method: 'ListTasks', params: 'str' }, 4],
      ['"just a string"', null],
      [[{ jsonrpc: '2.0', id: 1, method: 'ListTasks' }], null],
    ];
    for (const [body, id] of cases) {
      const { json } = await rpc(body);
      assert.equal(json.error?.code, -32600, JSON.stringify(body));
      assert.deepEqual(json.id, id, JSON.stringify(body));
    }
  });

  it('answers an unknown method with -32601 and wrong types with -32602', async () => {
    assert.equal((await rpc({ jsonrpc: '2.0', id: 1, method: 'DropTables' })).json.error.code, -32601);
    const bad = await rpc({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: ['x'] } });
    assert.equal(bad.json.error.code, -32602);
    assert.equal(bad.json.error.data[1].fieldViolations[0].field, 'id');
  });

  it('refuses hostile identifiers without touching anything', async () => {
    const hostile = ['../../etc/passwd', 'a b', "x'; DROP TABLE tasks;--", 'x'.repeat(500)];
    for (const contextId of hostile) {
      const { json } = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }], contextId } },
      });
      assert.equal(json.error?.code, -32602, contextId);
    }
    const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'ListTasks', params: {} });
    assert.equal(list.json.result.totalSize, 0, 'nothing was created');
    const show = await rpc({
      jsonrpc: '2.0',
      id: 3,
      method: '_cleveragents/session/show',
      params: { sessionId: 'y'.repeat(1000) },
    });
    assert.equal(show.json.error.code, -32602);
  });

  it('refuses an oversized body with 413', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(100_000) }] } },
    });
    const res = await post(big);
    assert.equal(res.status, 413);
    const json: any = await res.json();
    assert.equal(json.error.code, -32600);
  });

  it('refuses a wrong content type with 415 and GET on the endpoint with 405', async () => {
    const res = await post('{"jsonrpc":"2.0","id":1,"method":"ListTasks"}', { ...auth, 'content-type': 'text/plain' });
    assert.equal(res.status, 415);
    const get = await fetch(`${base}/a2a`, { headers: auth });
    assert.equal(get.status, 405);
    assert.equal((await fetch(`${base}/nowhere`)).status, 404);
  });

  it('negotiates versions: unknown → -32009, query parameter honoured, none → v0.3', async () => {
    const v9 = await rpc({ jsonrpc: '2.0', id: 1, method: 'ListTasks' }, { ...auth, 'a2a-version': '9.9' });
    assert.equal(v9.json.error.code, -32009);
    assert.equal(dataType(v9.json), 'VersionNotSupportedError');
    const { 'a2a-version': _, ...noVersion } = auth;
    const res = await fetch(`${base}/a2a?A2A-Version=1.0`, {
      method: 'POST',
      headers: noVersion,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'message/send',
        params: { message: { messageId: 'q', role: 'ROLE_USER', parts: [{ text: 'query version' }] } },
      }),
    });
    const json: any = await res.json();
    assert.equal(json.result.task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(res.headers.get('a2a-version'), '1.0');
    const old = await rpc(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'message/send',
        params: {
          message: { kind: 'message', messageId: 'o', role: 'user', parts: [{ kind: 'text', text: 'no header' }] },
        },
      },
      noVersion,
    );
    assert.equal(old.json.result.kind, 'task');
    assert.equal(old.json.result.status.state, 'completed');
  });

  it('sends errors of streaming methods as an SSE event', async () => {
    const res = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'SubscribeToTask', params: { id: 'missing' } }),
      { ...auth, accept: 'text/event-stream' },
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await res.text();
    const data = JSON.parse(/data: (.*)/.exec(text)?.[1] ?? '{}');
    assert.equal(data.id, 9);
    assert.equal(data.error.code, -32001);
  });

  it('streams SSE events with ids that resume after Last-Event-ID', async () => {
    const res = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'st',
        method: 'SendStreamingMessage',
        params: { message: { messageId: 's', role: 'ROLE_USER', parts: [{ text: 'resume me later please' }] } },
      }),
      { ...auth, accept: 'text/event-stream' },
    );
    const text = await res.text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] ?? '{}'));
    assert.deepEqual(
      ids,
      ids.map((_, i) => i),
    );
    const taskId = events[0].result.task.id;
    const resumed = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 'r', method: 'SubscribeToTask', params: { id: taskId } }),
      { ...auth, accept: 'text/event-stream', 'last-event-id': '2' },
    );
    const rtext = await resumed.text();
    const rids = [...rtext.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    assert.deepEqual(
      rids,
      ids.filter((i) => i > 2),
      'exactly the events after 2, no duplicates',
    );
  });

  it('serves the Agent Card at both paths with an ETag, and answers If-None-Match with 304', async () => {
    const a = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
    const b = await fetch(`${base}/.well-known/agent.json`, { headers: { 'a2a-version': '1.0' } });
    assert.equal(a.status, 200);
    const etag = a.headers.get('etag') ?? '';
    assert.ok(etag);
    const card = (await a.json()) as any;
    assert.deepEqual(await b.json(), card);
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.equal(card.supportedInterfaces[0].url, `${base}/a2a`);
    const again = await fetch(`${base}/.well-known/agent-card.json`, {
      headers: { 'a2a-version': '1.0', 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
    const legacy: any = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    assert.equal(legacy.url, `${base}/a2a`);
    assert.equal(legacy.protocolVersion, '0.3.0');
  });

  it('answers /health and /ready without a token, and notifications with 204', async () => {
    assert.equal((await fetch(`${base}/health`)).status, 200);
    assert.deepEqual(await (await fetch(`${base}/ready`)).json(), { ready: true });
    const res = await post(JSON.stringify({ jsonrpc: '2.0', method: '_cleveragents/health/check' }));
    assert.equal(res.status, 204);
  });

  it('keeps serving after all of the above', async () => {
    const { json } = await rpc({ jsonrpc: '2.0', id: 'ok', method: '_cleveragents/health/check', params: {} });
    assert.equal(json.result.status, 'ok');
  });
});
