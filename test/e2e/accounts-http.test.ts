/**
 * API keys over HTTP against a real `agents serve`: the server token is the administrator's key; a
 * key the administrator makes works at once, by Authorization or X-API-Key; revoking it, its
 * expiry and disabling its user take effect on the very next request; a wrong key is a 401.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import {
  A2AClient,
  keyCreate,
  keyList,
  keyRevoke,
  userAdd,
  userDisable,
  userEnable,
  auditList,
  whoami,
  getExtendedAgentCard,
} from '../../src/protocol/client/index.ts';
import { startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.ts';
import { postFrom } from '../support/post-from.ts';

/** A raw JSON-RPC call: the status and the body. */
async function rpc(
  base: string,
  headers: Record<string, string>,
  method = '_cleveragents/whoami',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A raw call over `agent` (one keep-alive socket): the status, the body, and whether the socket was reused. */
function rpcOn(
  agent: http.Agent,
  base: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown>; reused: boolean }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_cleveragents/whoami', params: {} });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/a2a`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
            reused: req.reusedSocket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const messageOf = (r: { body: Record<string, unknown> }): string =>
  String((r.body['error'] as { message?: string } | undefined)?.message);

describe('API keys over HTTP', () => {
  let dataDir: string;
  let server: HttpServerProcess;
  let admin: A2AClient;
  const clients: A2AClient[] = [];
  const as = (token: string): A2AClient => {
    const c = A2AClient.remote({ url: server.baseUrl, token });
    clients.push(c);
    return c;
  };

  before(async () => {
    dataDir = tempDir('ca-accounts-');
    server = await startHttpServer({ dataDir, env: { ...process.env, CLEVERAGENTS_CONFINEMENT: 'none' } });
    admin = as(TOKEN);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the server token is the administrator, created on the first start', async () => {
    assert.match(server.stderr(), /Created the administrator admin/);
    const me = await admin.call(whoami, {});
    assert.equal(me.user, 'admin');
    assert.equal(me.admin, true);
    assert.equal(me.kind, 'key');
    assert.match(me.credential ?? '', /^st_[0-9a-f]{16}$/);
    assert.deepEqual(me.namespaces, [{ name: 'local', role: 'owner' }]);
  });

  it('a user made by the administrator works at once with its first key, by bearer and X-API-Key', async () => {
    const made = await admin.call(userAdd, { name: 'alice', displayName: 'Alice' });
    assert.equal(made.user.defaultNamespace, 'alice');
    assert.match(made.key.key, /^ca_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    const alice = as(made.key.key);
    const me = await alice.call(whoami, {});
    assert.equal(me.user, 'alice');
    assert.equal(me.displayName, 'Alice');
    assert.equal(me.admin, false);
    assert.deepEqual(me.namespaces, [{ name: 'alice', role: 'owner' }]);
    const viaHeader = await rpc(server.baseUrl, { 'x-api-key': made.key.key });
    assert.equal(viaHeader.status, 200);
    assert.equal((viaHeader.body['result'] as { user: string }).user, 'alice');
    // The extended card lists the caller's namespaces and roles.
    const card = await alice.call(getExtendedAgentCard, {});
    const params = (card.capabilities as { extensions: Array<{ params: Record<string, unknown> }> }).extensions[0]!
      .params;
    assert.deepEqual(params['roles'], { alice: 'owner' });
    assert.deepEqual(params['namespaces'], ['alice']);
    // Not an administrator: user methods are refused.
    await assert.rejects(alice.call(userAdd, { name: 'mallory' }), /server administrators/);
  });

  it('a wrong key is a 401 that says so; no key at all too', async () => {
    const made = await admin.call(keyCreate, { name: 'probe' });
    const wrong = made.key.slice(0, -4) + (made.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const r = await rpc(server.baseUrl, { authorization: `Bearer ${wrong}` });
    assert.equal(r.status, 401);
    assert.match(messageOf(r), /unknown or wrong key/);
    const unknown = await rpc(server.baseUrl, { authorization: 'Bearer ca_zzzzzzzzzzzz_' + 'A'.repeat(43) });
    assert.equal(unknown.status, 401);
    assert.match(messageOf(unknown), /unknown or wrong key/);
    const none = await rpc(server.baseUrl, {});
    assert.equal(none.status, 401);
    assert.match(messageOf(none), /Authentication required/);
    const basic = await rpc(server.baseUrl, { authorization: 'Basic YWRtaW46cGFzcw==' });
    assert.equal(basic.status, 401);
    assert.match(messageOf(basic), /must be Bearer/);
  });

  it('a revoked key stops on the next request', async () => {
    const made = await admin.call(keyCreate, { name: 'ci' });
    const ci = as(made.key);
    assert.equal((await ci.call(whoami, {})).user, 'admin');
    const revoked = await admin.call(keyRevoke, { id: made.id });
    assert.ok(revoked.revokedAt);
    const r = await rpc(server.baseUrl, { authorization: `Bearer ${made.key}` });
    assert.equal(r.status, 401);
    assert.match(messageOf(r), new RegExp(`${made.id} was revoked at`));
    const listed = await admin.call(keyList, {});
    const row = listed.keys.find((k) => k.id === made.id);
    assert.ok(row?.revokedAt);
    assert.equal('hash' in (row as object), false, 'keys are listed without their hashes');
  });

  it('on one keep-alive connection: a revoked key stops on the next request; another key is checked as itself', async () => {
    const made = await admin.call(keyCreate, { name: 'keepalive' });
    const { user, key } = await admin.call(userAdd, { name: 'dave' });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const on = (token: string) => rpcOn(agent, server.baseUrl, { authorization: `Bearer ${token}` });
      const first = await on(made.key);
      assert.equal(first.status, 200);
      assert.equal(first.reused, false);
      const again = await on(made.key);
      assert.equal(again.reused, true, 'the same connection');
      assert.equal((again.body['result'] as { user: string }).user, 'admin');
      const other = await on(key.key);
      assert.equal(other.reused, true);
      assert.equal(
        (other.body['result'] as { user: string }).user,
        user.name,
        'a different header is its own principal',
      );
      assert.equal((await on(made.key)).status, 200);
      await admin.call(keyRevoke, { id: made.id });
      const refused = await on(made.key);
      assert.equal(refused.reused, true);
      assert.equal(refused.status, 401);
      assert.match(messageOf(refused), new RegExp(`${made.id} was revoked at`));
      assert.equal((await on(key.key)).status, 200, 'the other key still works on that connection');
    } finally {
      agent.destroy();
    }
  });

  it('an expired key is refused, saying when it expired', async () => {
    const made = await admin.call(keyCreate, { name: 'short', expiresInDays: 1 });
    assert.equal((await as(made.key).call(whoami, {})).user, 'admin');
    // Move its expiry into the past behind the server's back: the row is read on every request.
    const past = '2020-01-01T00:00:00.000Z';
    const db = new Database(join(dataDir, 'cleveragents.db'));
    try {
      db.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').run(past, made.id);
    } finally {
      db.close();
    }
    const r = await rpc(server.baseUrl, { authorization: `Bearer ${made.key}` });
    assert.equal(r.status, 401);
    assert.match(messageOf(r), new RegExp(`expired at ${past}`));
  });

  it('disabling a user refuses their keys on the next request; enabling lets them back', async () => {
    const made = await admin.call(userAdd, { name: 'bob' });
    const bob = as(made.key.key);
    assert.equal((await bob.call(whoami, {})).user, 'bob');
    await admin.call(userDisable, { name: 'bob' });
    const r = await rpc(server.baseUrl, { authorization: `Bearer ${made.key.key}` });
    assert.equal(r.status, 401);
    assert.match(messageOf(r), /user bob is disabled/);
    await admin.call(userEnable, { name: 'bob' });
    assert.equal((await bob.call(whoami, {})).user, 'bob');
  });

  it('the audit log has the logins, refusals, users and keys', async () => {
    const { events } = await admin.call(auditList, { limit: 1000 });
    const kinds = new Set(events.map((e) => e.event));
    for (const k of ['auth.login', 'auth.refused', 'user.created', 'key.created', 'key.revoked', 'user.disabled'])
      assert.ok(kinds.has(k), `${k} in ${[...kinds].join(', ')}`);
    const refused = await admin.call(auditList, { event: 'auth.refused' });
    assert.ok(refused.events.every((e) => e.event === 'auth.refused' && e.outcome === 'refused'));
    assert.ok(refused.events.some((e) => (e.details as { reason?: string } | undefined)?.reason === 'revoked'));
  });

  // From an address of its own: the refusals above count for 127.0.0.1 (a success does not reset it).
  it('wrong X-API-Key guesses are throttled like wrong bearer tokens', async () => {
    const guess = 'ca_zzzzzzzzzzzz_' + 'B'.repeat(43);
    const call = () =>
      postFrom(
        server.baseUrl,
        '127.0.0.7',
        { 'x-api-key': guess },
        {
          jsonrpc: '2.0',
          id: 1,
          method: '_cleveragents/whoami',
          params: {},
        },
      );
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await call()).status);
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.equal(statuses[10], 429, 'the eleventh guess is answered 429 (an unknown key id: no hash is spent on it)');
    const last = await call();
    assert.ok(Number(last.headers['retry-after']) >= 1, 'with Retry-After');
    // Issue #40: the throttle counts per credential and address: a valid API key from that address
    // is accepted, and so is the server token (guesses at a key id are no guesses at it).
    const made = await admin.call(keyCreate, { name: 'behind-the-nat' });
    const whoamiFrom = (headers: Record<string, string>) =>
      postFrom(server.baseUrl, '127.0.0.7', headers, {
        jsonrpc: '2.0',
        id: 1,
        method: '_cleveragents/whoami',
        params: {},
      });
    const ok = await whoamiFrom({ 'x-api-key': made.key });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await whoamiFrom({ 'x-api-key': TOKEN })).status, 200);
    assert.equal((await call()).status, 429, 'the guessed key id is still throttled');
  });
});
