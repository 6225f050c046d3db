/**
 * Per-user limits on a server (issue #40): over a limit a request gets HTTP 429 with Retry-After
 * and the JSON-RPC error (BUDGET_EXCEEDED: -32006 on extension methods, with
 * `data.retryAfterSeconds`), a streaming send is refused before its stream starts, an
 * administrator's namespace override lowers or raises a limit, a member cannot change limits, and
 * the local agent (stdio) is never limited. Counting across instances: usage-limits-pg.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, makePrincipal, silentLogger } from '../../src/application/index.ts';
import type { Task } from '../../src/domain/a2a.model.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { FacadeAuthenticator } from '../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';

const TOKEN = 'usage-limits-test-token-0123456789';
const ADMIN = makePrincipal({ id: 'admin', roles: { local: 'owner' }, admin: true });

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
}

let seq = 0;
const message = (text = 'hello') => ({
  message: { messageId: `m-${++seq}`, role: 'ROLE_USER', parts: [{ text }] },
});

describe('per-user limits over HTTP', () => {
  let app: App;
  let http: A2aHttpServer;
  let base: string;
  const keys = new Map<string, string>();
  const dataDir = mkdtempSync(join(tmpdir(), 'ca-limits-'));

  before(async () => {
    app = await buildApp({
      dataDir,
      inMemory: true,
      defaultActor: 'builtin/conformance',
      card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
      usageLimits: { requestsPerMinute: 8, concurrentTurns: 1, tokensPerDay: 1000 },
    });
    await app.facade.users.ensureServerToken(TOKEN);
    for (const name of ['alice', 'bob', 'carol', 'dave', 'erin'])
      keys.set(name, (await app.facade.users.add({ name }, ADMIN)).key.key);
    http = new A2aHttpServer({
      dispatcher: app.dispatcher,
      card: app.card,
      auth: new FacadeAuthenticator(app.facade.authentication),
      logger: silentLogger,
      authThrottle: null,
    });
    base = `http://127.0.0.1:${(await http.listen(0, '127.0.0.1')).port}`;
  });
  after(async () => {
    await http.close(100);
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const post = async (
    user: string,
    method: string,
    params: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        authorization: `Bearer ${user === 'admin' ? TOKEN : keys.get(user)}`,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }),
    });
    const text = await res.text();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type'),
      body: JSON.parse(text) as Answer['body'],
    };
  };
  /** The ErrorInfo metadata of an A2A v1.0 error. */
  const metadata = (a: Answer): Record<string, string> =>
    (a.body.error?.data as Array<{ metadata?: Record<string, string> }>)[0]?.metadata ?? {};

  it('answers the request past the per-minute limit with 429, Retry-After and the JSON-RPC error', async () => {
    for (let i = 0; i < 8; i++) assert.equal((await post('alice', 'ListTasks', {})).status, 200);
    const over = await post('alice', 'ListTasks', {});
    assert.equal(over.status, 429);
    const wait = Number(over.retryAfter);
    assert.ok(wait >= 1 && wait <= 60, `Retry-After in seconds: ${over.retryAfter}`);
    assert.equal(over.body.error?.code, -32603, 'A2A has no code of its own for it: the reason says what it is');
    assert.match(
      over.body.error?.message ?? '',
      /^Limit of 8 requests per minute reached \(the limits of namespace alice\); it resets at \S+Z \(in \d+ s\)$/,
    );
    const info = metadata(over);
    assert.equal(info['limit'], 'requestsPerMinute');
    assert.equal(info['retryAfterSeconds'], String(wait));
    // An extension method answers in the platform's taxonomy: -32006 with data.retryAfterSeconds.
    const ext = await post('alice', '_cleveragents/whoami', {}, { 'a2a-extensions': 'urn:cleveragents:extensions:v1' });
    assert.equal(ext.status, 429);
    assert.equal(ext.body.error?.code, -32006);
    const data = ext.body.error?.data as Record<string, unknown>;
    assert.equal(data['reason'], 'BUDGET_EXCEEDED');
    assert.equal(data['type'], 'BudgetExceededError');
    assert.equal(data['retryAfterSeconds'], Number(ext.retryAfter));
    // Another user is not held back by alice's requests.
    assert.equal((await post('bob', 'ListTasks', {})).status, 200);
  });

  it('refuses a second running turn (blocking, and streaming before its stream starts)', async () => {
    // builtin/conformance keeps a task WORKING until it is cancelled.
    const first = await post('bob', 'SendMessage', { ...message(), configuration: { returnImmediately: true } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const taskId = (first.body.result as { task: Task }).task.id;
    const blocking = await post('bob', 'SendMessage', message());
    assert.equal(blocking.status, 429);
    assert.equal(blocking.retryAfter, '10');
    assert.match(
      blocking.body.error?.message ?? '',
      /^Limit of 1 concurrent turns reached \(the limits of namespace bob\); it resets when one of your running turns ends$/,
    );
    assert.equal(metadata(blocking)['limit'], 'concurrentTurns');
    const streaming = await post('bob', 'SendStreamingMessage', message(), { accept: 'text/event-stream' });
    assert.equal(streaming.status, 429);
    assert.match(streaming.contentType ?? '', /application\/json/, 'no stream was started');
    assert.equal(metadata(streaming)['limit'], 'concurrentTurns');
    // Once the turn ends, the next one may start.
    assert.equal((await post('bob', 'CancelTask', { id: taskId })).status, 200);
    const next = await post('bob', 'SendMessage', { ...message(), configuration: { returnImmediately: true } });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    await post('bob', 'CancelTask', { id: (next.body.result as { task: Task }).task.id });
  });

  it("refuses a turn once the day's stored model tokens reach the limit, until midnight UTC", async () => {
    // Model steps of carol's that used 1,000 tokens today, as the meter records them.
    await app.storage.quota.record('carol', 600, new Date().toISOString());
    await app.storage.quota.record('carol', 400, new Date().toISOString());
    const over = await post('carol', 'SendMessage', message());
    assert.equal(over.status, 429);
    const info = metadata(over);
    assert.equal(info['limit'], 'tokensPerDay');
    const midnight = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
    assert.equal(info['resetsAt'], midnight);
    assert.match(over.body.error?.message ?? '', /^Limit of 1000 model tokens per day reached/);
  });

  it("an administrator's namespace override raises or lowers a limit; a member cannot change it", async () => {
    const member = await post(
      'dave',
      '_cleveragents/namespace/limits/set',
      { namespace: 'dave', tokensPerDay: 0 },
      {
        'a2a-extensions': 'urn:cleveragents:extensions:v1',
      },
    );
    assert.equal(member.body.error?.code, -32003, JSON.stringify(member.body));
    assert.match(member.body.error?.message ?? '', /server administrators/);
    // Raised: erin may run two turns in her namespace.
    const set = await post('admin', '_cleveragents/namespace/limits/set', { namespace: 'erin', concurrentTurns: 2 });
    assert.deepEqual((set.body.result as { limits: unknown }).limits, {
      requestsPerMinute: 8,
      concurrentTurns: 2,
      tokensPerDay: 1000,
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await post('erin', 'SendMessage', { ...message(), configuration: { returnImmediately: true } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push((r.body.result as { task: Task }).task.id);
    }
    const third = await post('erin', 'SendMessage', message());
    assert.equal(third.status, 429);
    assert.match(
      third.body.error?.message ?? '',
      /Limit of 2 concurrent turns reached \(the limits of namespace erin\)/,
    );
    for (const id of ids) await post('erin', 'CancelTask', { id });
    // Lowered: dave gets two requests a minute in his namespace.
    await post('admin', '_cleveragents/namespace/limits/set', { namespace: 'dave', requestsPerMinute: 2 });
    const got = await post('admin', '_cleveragents/namespace/limits/get', { namespace: 'dave' });
    assert.deepEqual((got.body.result as { overrides: unknown }).overrides, { requestsPerMinute: 2 });
    // A request refused before it is admitted (dave's limits/set) does not count.
    assert.equal((await post('dave', 'ListTasks', {})).status, 200);
    assert.equal((await post('dave', 'ListTasks', {})).status, 200);
    const over = await post('dave', 'ListTasks', {});
    assert.equal(over.status, 429);
    assert.match(over.body.error?.message ?? '', /Limit of 2 requests per minute/);
  });
});

describe('per-user limits in local mode', () => {
  let app: App;
  const dataDir = mkdtempSync(join(tmpdir(), 'ca-limits-local-'));
  before(async () => {
    app = await buildApp({
      dataDir,
      inMemory: true,
      defaultActor: 'builtin/conformance',
      card: { endpoint: 'stdio://local', auth: 'none' },
      usageLimits: { requestsPerMinute: 1, concurrentTurns: 1, tokensPerDay: 1 },
    });
  });
  after(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('never limits the local user, even with limits configured', async () => {
    const signal = new AbortController().signal;
    const call = (method: string, params: unknown) =>
      app.dispatcher.dispatch(
        { jsonrpc: '2.0', id: ++seq, method, params },
        { principal: LOCAL_PRINCIPAL, version: '1.0', signal },
      );
    for (let i = 0; i < 3; i++) {
      const out = await call('SendMessage', { ...message(), configuration: { returnImmediately: true } });
      assert.equal(out.kind, 'response');
      assert.ok(out.kind === 'response' && 'result' in out.response, JSON.stringify(out));
      assert.equal(out.kind === 'response' ? out.retryAfterSeconds : 0, undefined);
    }
  });
});
