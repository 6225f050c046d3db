/**
 * The HTTP server throttles addresses that keep presenting wrong credentials (429 + Retry-After)
 * without locking out valid ones (issue #35, point 8: one attacker behind a shared NAT must not
 * stop a colleague with a valid key; a store outage is not a failed login), and both transports
 * write one structured access log line per request.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { LOCAL_PRINCIPAL, silentLogger, type AccountRepository, type Logger } from '../../src/application/index.ts';
import { AppError } from '../../src/domain/errors.ts';
import { ScryptKeyHasher } from '../../src/infrastructure/index.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { AuthThrottle, FacadeAuthenticator } from '../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';
import { A2aStdioServer } from '../../src/protocol/server/stdio.server.ts';
import { createPgDatabase, PG_ADMIN_URL, pgSkip, type PgTestDatabase } from '../support/postgres.ts';
import { eventually, startHttpServer, TOKEN, type HttpServerProcess } from '../support/harness.ts';
import { findKey } from '../support/team-server.ts';
import { postFrom, type Answer } from '../support/post-from.ts';
import { accountServices } from '../support/account-services.ts';

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

  it('answers 429 with Retry-After and a JSON-RPC error after too many wrong tokens; the server token is then refused unchecked', async () => {
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
    assert.equal(
      body.error.message,
      `Too many failed authentication attempts with this credential from this address; retry in ${wait} s`,
    );
    // The server token is the one credential a person chooses, so the one worth guessing: from a
    // throttled address it is not looked at, even when right.
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

/**
 * Issue #35, point 8 over real HTTP against `agents serve` (5 failures a minute). Each test acts
 * from its own loopback address (127.0.0.x), as the people behind one NAT share one.
 */
describe('issue #35: a shared address (NAT) under attack — valid credentials keep working', () => {
  let server: HttpServerProcess;
  let dataDir: string;
  const keys: Record<string, string> = {};
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ca-nat-'));
    server = await startHttpServer({ dataDir, env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '5' } });
    for (const name of ['alice', 'bob', 'carol', 'dave', 'erin']) {
      const r = await call('127.0.0.1', TOKEN, '_cleveragents/user/add', { name });
      const key = findKey(r.body);
      assert.ok(key, JSON.stringify(r.body));
      keys[name] = key;
    }
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (from: string, credential: string | undefined, method = '_cleveragents/whoami', params = {}) =>
    postFrom(server.baseUrl, from, credential, { jsonrpc: '2.0', id: 1, method, params });
  const wrongSecretFor = (key: string): string => `${key.slice(0, 15)}_${'A'.repeat(43)}`;
  const user = (r: Answer): unknown => (r.body.result as { user?: string } | undefined)?.user;
  const assertThrottled = (r: Answer, what: string): void => {
    assert.equal(r.status, 429, `${what}: ${JSON.stringify(r.body)}`);
    const wait = Number(r.headers['retry-after']);
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `${what}: Retry-After ${wait}`);
    assert.equal(
      r.body.error?.message,
      `Too many failed authentication attempts with this credential from this address; retry in ${wait} s`,
    );
  };

  it("an attacker's wrong tokens from the address do not lock out a colleague's valid API key", async () => {
    const nat = '127.0.0.2';
    for (let i = 0; i < 5; i++)
      assert.equal((await call(nat, 'wrong-token-wrong-token')).status, 401, `failure ${i + 1}`);
    assertThrottled(await call(nat, 'wrong-token-wrong-token'), 'a sixth wrong token');
    // A made-up key is another credential: counted apart from the guesses at the token.
    assert.equal((await call(nat, `ca_aaaaaaaaaaaa_${'x'.repeat(43)}`)).status, 401, 'a made-up key');
    // alice's key was never used (its slow hash runs now); both are accepted.
    const alice = await call(nat, keys['alice']);
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    assert.equal(user(alice), 'alice');
    assert.equal(user(await call(nat, keys['bob'])), 'bob');
    assert.equal(user(await call(nat, keys['alice'])), 'alice', 'and again');
    // The attacker is still throttled: a success of someone else does not reset the address.
    assertThrottled(await call(nat, 'wrong-token-wrong-token'), 'the attacker again');
    assert.equal(user(await call('127.0.0.3', TOKEN)), 'admin', 'the server token from another address');
  });

  it('wrong secrets aimed at one key id: throttled from the address, while the valid key is accepted there and other keys are counted apart', async () => {
    const nat = '127.0.0.4';
    for (let i = 0; i < 5; i++)
      assert.equal((await call(nat, wrongSecretFor(keys['carol'] ?? ''))).status, 401, `wrong secret ${i + 1}`);
    assertThrottled(await call(nat, wrongSecretFor(keys['carol'] ?? '')), 'a sixth wrong secret');
    // A different key's wrong secret from the same address is its own credential: 401, not 429.
    assert.equal((await call(nat, wrongSecretFor(keys['dave'] ?? ''))).status, 401, "dave's id is counted apart");
    assertThrottled(await call(nat, wrongSecretFor(keys['carol'] ?? '')), 'the attacker still refused');
    // carol's valid key, never verified by this server, is accepted from the throttled address.
    assert.equal(user(await call(nat, keys['carol'])), 'carol', "carol's own key");
    assert.equal(user(await call(nat, keys['dave'])), 'dave', 'another key from the NAT');
  });
});

/** The answer of a request refused because the account store could not be read. */
function assertUnavailable(r: Answer, what: string): void {
  assert.equal(r.status, 503, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.headers['retry-after'], undefined, `${what}: not throttled`);
  assert.equal((r.body.error?.data as { reason?: string } | undefined)?.reason, 'UNAVAILABLE', what);
}

const userOf = (r: Answer): unknown => (r.body.result as { user?: string } | undefined)?.user;

describe('issue #35: a store outage is not a failed login (HTTP, the account store failing)', () => {
  let app: App;
  let http: A2aHttpServer;
  let baseUrl: string;
  let key: string;
  let down = false;
  before(async () => {
    app = await buildApp({
      dataDir: mkdtempSync(join(tmpdir(), 'ca-outage-')),
      inMemory: true,
      card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
    });
    const real = app.storage.accounts;
    // Every read of a key fails as the PostgreSQL runner fails when the database does not answer.
    const accounts: AccountRepository = new Proxy(real, {
      get(target, prop) {
        const v = Reflect.get(target, prop) as unknown;
        if (typeof v !== 'function') return v;
        if (prop !== 'lookupKey') return (v as (...a: unknown[]) => unknown).bind(target);
        return (id: string) =>
          down
            ? Promise.reject(
                new AppError(
                  'UNAVAILABLE',
                  'Storage is unavailable: the database does not answer; nothing was changed by this request',
                ),
              )
            : real.lookupKey(id);
      },
    });
    const { authentication: auth, users } = accountServices({
      accounts,
      hasher: new ScryptKeyHasher({ N: 2 ** 10 }),
      namespaces: app.storage.namespaces,
      audit: { record: () => Promise.resolve() },
      logger: silentLogger,
    });
    await users.ensureServerToken(TOKEN);
    const admin = await auth.authenticate({ bearer: TOKEN, client: 'setup' });
    key = (await users.add({ name: 'bob' }, admin)).key.key;
    http = new A2aHttpServer({
      dispatcher: app.dispatcher,
      card: app.card,
      auth: new FacadeAuthenticator(auth),
      logger: silentLogger,
      authThrottle: new AuthThrottle({ maxFailures: 2 }),
    });
    baseUrl = `http://127.0.0.1:${(await http.listen(0, '127.0.0.1')).port}`;
  });
  after(async () => {
    await http.close();
    await app.close();
  });
  const call = (credential: string) =>
    postFrom(baseUrl, '127.0.0.1', credential, { jsonrpc: '2.0', id: 1, method: '_cleveragents/whoami', params: {} });

  it('answers 503 (UNAVAILABLE) while the store is down, counts none of it, and valid credentials work when it is back', async () => {
    down = true;
    for (let i = 0; i < 5; i++) assertUnavailable(await call(key), `a valid key, try ${i + 1}`);
    for (let i = 0; i < 5; i++) assertUnavailable(await call('wrong-token-wrong-token'), `a wrong token, try ${i + 1}`);
    down = false;
    // Two failures would have throttled the address: the server token (checked only from an
    // address under its limit) proves none of the ten counted.
    assert.equal(userOf(await call(TOKEN)), 'admin');
    assert.equal(userOf(await call(key)), 'bob');
  });
});

describe('issue #35: a PostgreSQL outage is not a failed login (real agents serve)', { skip: pgSkip() }, () => {
  let db: PgTestDatabase;
  let server: HttpServerProcess;
  let dataDir: string;
  let key: string;
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  before(async () => {
    db = await createPgDatabase('ca_outage');
    dataDir = mkdtempSync(join(tmpdir(), 'ca-pg-outage-'));
    server = await startHttpServer({
      dataDir,
      args: ['--database-url', db.url],
      env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '2' },
    });
    const r = await postFrom(server.baseUrl, '127.0.0.1', TOKEN, {
      jsonrpc: '2.0',
      id: 1,
      method: '_cleveragents/user/add',
      params: { name: 'bob' },
    });
    const found = findKey(r.body);
    assert.ok(found, JSON.stringify(r.body));
    key = found;
  });
  after(async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await db?.drop();
  });
  const call = (credential: string) =>
    postFrom(server.baseUrl, '127.0.0.6', credential, {
      jsonrpc: '2.0',
      id: 1,
      method: '_cleveragents/whoami',
      params: {},
    });

  it('the database refusing connections: 503, nothing counted; once it is back the key and the server token work from the same address', async () => {
    const name = new URL(db.url).pathname.slice(1);
    await admin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    try {
      for (let i = 0; i < 4; i++) assertUnavailable(await call(key), `a valid key, try ${i + 1}`);
      for (let i = 0; i < 4; i++)
        assertUnavailable(await call('wrong-token-wrong-token'), `a wrong token, try ${i + 1}`);
    } finally {
      await admin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
    }
    const back = await eventually(
      async () => {
        const r = await call(key);
        return r.status === 200 ? r : undefined;
      },
      10_000,
      'the key accepted once the database is back',
    );
    assert.equal(userOf(back), 'bob');
    const token = await call(TOKEN);
    assert.equal(token.status, 200, `the server token from the same address: ${JSON.stringify(token.body)}`);
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
