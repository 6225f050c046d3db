/**
 * Issue #40, point 6, over a real SQLite file: while the database cannot be read (its connection
 * closed, as when the file is lost or the handle fails; a lock by another process cannot stop a
 * reader in WAL mode), no credential can be checked — each request is answered UNAVAILABLE (HTTP 503), none counts as
 * a failed login, and once it is open again a valid key and the server token work at once from the
 * same address (before, ten such requests throttled the address for a minute).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/application/index.ts';
import {
  openDatabase,
  ScryptKeyHasher,
  SqliteAccountRepository,
  SqliteNamespaceRepository,
  type SqliteDatabase,
} from '../../src/infrastructure/index.ts';
import { AuthThrottle, FacadeAuthenticator } from '../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { accountServices } from '../support/account-services.ts';
import { postFrom, type Answer } from '../support/post-from.ts';

const SERVER_TOKEN = 'the-server-token-0123456789';

describe('issue #40: an unreadable SQLite database is not a failed login', () => {
  let dir: string;
  let db: SqliteDatabase;
  let app: App;
  let http: A2aHttpServer;
  let baseUrl: string;
  let key: string;
  let reopen: () => Promise<void>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-auth-lock-'));
    db = await openDatabase({ file: join(dir, 'accounts.db') });
    let current = new SqliteAccountRepository(db);
    reopen = async () => {
      db = await openDatabase({ file: join(dir, 'accounts.db') });
      current = new SqliteAccountRepository(db);
    };
    // The service holds one repository; behind it the real one on whichever connection is current.
    const accounts = new Proxy(current, {
      get(_t, prop) {
        const v = Reflect.get(current, prop) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(current) : v;
      },
    });
    app = await buildApp({
      dataDir: join(dir, 'app'),
      inMemory: true,
      card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
    });
    const { authentication, users } = accountServices({
      accounts,
      hasher: new ScryptKeyHasher({ N: 2 ** 10 }),
      namespaces: new SqliteNamespaceRepository(db),
      audit: { record: () => Promise.resolve() },
      logger: silentLogger,
    });
    await users.ensureServerToken(SERVER_TOKEN);
    const admin = await authentication.authenticate({ bearer: SERVER_TOKEN, client: 'setup' });
    key = (await users.add({ name: 'bob' }, admin)).key.key;
    http = new A2aHttpServer({
      dispatcher: app.dispatcher,
      card: app.card,
      auth: new FacadeAuthenticator(authentication),
      logger: silentLogger,
      authThrottle: new AuthThrottle({ maxFailures: 2 }),
    });
    baseUrl = `http://127.0.0.1:${(await http.listen(0, '127.0.0.1')).port}`;
  });
  after(async () => {
    await http?.close();
    await app?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // A new connection per request: a keep-alive socket could be answered from its earlier check.
  const call = (credential: string): Promise<Answer> =>
    postFrom(baseUrl, '127.0.0.1', credential, { jsonrpc: '2.0', id: 1, method: '_cleveragents/whoami', params: {} });
  const userOf = (r: Answer): unknown => (r.body.result as { user?: string } | undefined)?.user;

  it('answers 503 with a hint while the database cannot be read, counts none of it, and works at once when it is open again', async () => {
    // A keep-alive client whose connection already authenticated: its next request is answered
    // from that check only while the store says nothing changed, which it cannot say now.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const kept = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_cleveragents/whoami', params: {} });
        const req = request(`${baseUrl}/a2a`, {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${key}` },
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      assert.equal(await kept(), 200);
      await db.close();
      assert.equal(await kept(), 503, 'the kept-alive connection');
    } finally {
      agent.destroy();
    }
    for (const credential of [key, 'wrong-token-wrong-token', `${key.slice(0, 15)}_${'A'.repeat(43)}`])
      for (let i = 0; i < 4; i++) {
        const r = await call(credential);
        assert.equal(r.status, 503, `try ${i + 1}: ${JSON.stringify(r.body)}`);
        assert.equal(r.headers['retry-after'], undefined, 'not throttled');
        const data = r.body.error?.data as { reason?: string; hint?: string } | undefined;
        assert.equal(data?.reason, 'UNAVAILABLE');
        assert.ok(data?.hint, `a hint: ${JSON.stringify(r.body)}`);
      }
    await reopen();
    // Two failures would throttle: the server token (refused unchecked once its count is reached)
    // proves none of the twelve counted.
    assert.equal(userOf(await call(SERVER_TOKEN)), 'admin');
    assert.equal(userOf(await call(key)), 'bob');
  });
});
