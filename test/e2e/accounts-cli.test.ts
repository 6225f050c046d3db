/**
 * The account commands against a real `agents serve` on 127.0.0.1: login (the key on stdin, checked
 * with whoami, stored 0600 and made current), whoami, key create|list|revoke, user
 * add|list|disable|enable, audit list and logout; and their refusal in local mode.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli } from '../support/cli.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';

const TOKEN = 'accounts-cli-token-0123456789abcdef';

describe('agents login, whoami, key, user, audit, logout', () => {
  const root = mkdtempSync(join(tmpdir(), 'agents-accounts-cli-'));
  const dataDir = join(root, 'server');
  const configHome = join(root, 'config');
  const credFile = join(configHome, 'cleveragents', 'credentials.json');
  let server: HttpServerProcess;

  const agents = agentsCli({
    dataDir: join(root, 'client-data'),
    configHome,
    env: { CLEVERAGENTS_CONFINEMENT: 'none' },
    timeoutMs: 20_000,
  });
  before(async () => {
    server = await startHttpServer({
      dataDir,
      token: TOKEN,
      env: { ...process.env, CLEVERAGENTS_CONFINEMENT: 'none' },
    });
  });
  after(async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('local mode: whoami is the local user; keys and users are refused with a hint to serve', async () => {
    const me = await agents.json(['whoami']);
    assert.equal(me.exitCode, 0, JSON.stringify(me));
    assert.equal(me.data.user, 'local');
    assert.equal(me.data.kind, 'local');
    const key = await agents.json(['key', 'list']);
    assert.notEqual(key.exitCode, 0);
    assert.match(key.data.error.message, /local mode has one user and no keys; run `agents serve` for a server/);
  });

  it('a wrong key is not stored', async () => {
    const r = await agents.json(['login', '--server', server.baseUrl], {
      input: 'ca_zzzzzzzzzzzz_' + 'A'.repeat(43) + '\n',
    });
    assert.notEqual(r.exitCode, 0);
    assert.match(r.data.error.message, /unknown or wrong key/);
    assert.throws(() => statSync(credFile), /ENOENT/);
  });

  it('login reads the key from stdin, verifies it and makes the server current; then everything uses it', async () => {
    const login = await agents.json(['login', '--server', server.baseUrl], { input: `${TOKEN}\n` });
    assert.equal(login.exitCode, 0, JSON.stringify(login));
    assert.equal(login.data.user, 'admin');
    assert.equal(statSync(credFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(configHome, 'cleveragents')).mode & 0o777, 0o700);
    const stored = JSON.parse(readFileSync(credFile, 'utf8')) as { current: string; servers: Record<string, any> };
    assert.equal(stored.current, server.baseUrl);
    assert.equal(stored.servers[server.baseUrl].kind, 'key');
    assert.equal(stored.servers[server.baseUrl].user, 'admin');

    // No --server: the current login is used.
    const me = await agents.json(['whoami']);
    assert.equal(me.data.user, 'admin');
    assert.equal(me.data.admin, true);
    // --local overrides it.
    assert.equal((await agents.json(['--local', 'whoami'])).data.user, 'local');
  });

  it('user add makes a user with a first key; user list, disable and enable; key create|list|revoke', async () => {
    const added = await agents.json(['user', 'add', 'dana', '--display-name', 'Dana']);
    assert.equal(added.exitCode, 0, JSON.stringify(added));
    const danaKey: string = added.data.key.key;
    assert.match(danaKey, /^ca_/);
    const list = await agents.json(['user', 'list']);
    assert.deepEqual(
      list.data.users.map((u: { name: string }) => u.name),
      ['admin', 'dana'],
    );

    // Dana's key works through --token; her whoami says who she is.
    const asDana = await agents.json(['--token', danaKey, 'whoami']);
    assert.equal(asDana.data.user, 'dana');
    assert.deepEqual(asDana.data.namespaces, [{ name: 'dana', role: 'owner' }]);
    const refused = await agents.json(['--token', danaKey, 'user', 'list']);
    assert.notEqual(refused.exitCode, 0);
    assert.match(refused.data.error.message, /server administrators/);

    assert.equal((await agents.json(['user', 'disable', 'dana'])).exitCode, 0);
    const off = await agents.json(['--token', danaKey, 'whoami']);
    assert.match(off.data.error.message, /user dana is disabled/);
    assert.equal((await agents.json(['user', 'enable', 'dana'])).exitCode, 0);
    assert.equal((await agents.json(['--token', danaKey, 'whoami'])).data.user, 'dana');

    const made = await agents.json(['key', 'create', 'ci', '--expires-in-days', '30']);
    assert.equal(made.exitCode, 0, JSON.stringify(made));
    assert.ok(made.data.expiresAt);
    const keys = await agents.json(['key', 'list']);
    const row = keys.data.keys.find((k: { id: string }) => k.id === made.data.id);
    assert.equal(row.name, 'ci');
    assert.equal(row.hash, undefined);
    assert.equal((await agents.json(['key', 'revoke', made.data.id])).exitCode, 0);
    const gone = await agents.json(['--token', made.data.key, 'whoami']);
    assert.match(gone.data.error.message, /was revoked at/);
    // Plain output prints the key once, and lists keys as a table.
    const plain = await agents.run(['key', 'create', 'laptop']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /key: ca_[a-z0-9]{12}_/);
  });

  it('audit list shows the events, filtered', async () => {
    const all = await agents.json(['audit', 'list', '--limit', '500']);
    assert.equal(all.exitCode, 0, JSON.stringify(all));
    const kinds = new Set(all.data.events.map((e: { event: string }) => e.event));
    for (const k of ['user.created', 'key.created', 'key.revoked', 'user.disabled', 'user.enabled', 'auth.refused'])
      assert.ok(kinds.has(k), k);
    const refused = await agents.json(['audit', 'list', '--event', 'auth.refused']);
    assert.ok(refused.data.events.length > 0);
    assert.ok(refused.data.events.every((e: { event: string }) => e.event === 'auth.refused'));
    const text = await agents.run(['audit', 'list', '--event', 'user.created']);
    assert.match(text.stdout, /user\.created/);
  });

  it('logout forgets the login: commands are local again', async () => {
    const out = await agents.json(['logout']);
    assert.equal(out.data.loggedOut, true);
    const stored = JSON.parse(readFileSync(credFile, 'utf8')) as { current?: string; servers: object };
    assert.equal(stored.current, undefined);
    assert.deepEqual(stored.servers, {});
    assert.equal((await agents.json(['whoami'])).data.user, 'local');
    assert.equal((await agents.json(['logout'])).data.loggedOut, false);
  });
});
