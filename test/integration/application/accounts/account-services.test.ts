import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import {
  LOCAL_PRINCIPAL,
  serverTokenId,
  type AuditEntry,
  type JwtVerifier,
  type Principal,
  type VerifiedToken,
} from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import {
  openDatabase,
  SqliteAccountRepository,
  SqliteNamespaceRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';
import { accountServices, type AccountServices } from '../../../support/account-services.ts';
import { CountingHasher } from '../../../support/fakes/accounts.ts';

const SERVER_TOKEN = 'the-server-token-0123456789';
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as never;

class FakeJwt implements JwtVerifier {
  tokens = new Map<string, VerifiedToken | string>();
  calls = 0;
  verify(token: string): Promise<VerifiedToken> {
    this.calls++;
    const t = this.tokens.get(token);
    if (t === undefined || typeof t === 'string')
      return Promise.reject(new AppError('UNAUTHENTICATED', `Authentication failed: ${t ?? 'the token is not valid'}`));
    return Promise.resolve(t);
  }
}

const rejectsWith = (re: RegExp) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.reason, 'UNAUTHENTICATED');
  assert.match(err.message, re);
  return true;
};

describe('the account services: sign-in, users, API keys', () => {
  let db: SqliteDatabase;
  let hasher: CountingHasher;
  let audit: AuditEntry[];
  let now: number;
  let jwt: FakeJwt;
  let namespaces: SqliteNamespaceRepository;
  let repo: SqliteAccountRepository;
  const make = (withJwt = true): AccountServices =>
    accountServices({
      accounts: repo,
      hasher,
      namespaces,
      audit: { record: (e) => Promise.resolve(void audit.push(e)) },
      logger: silent,
      now: () => now,
      ...(withJwt ? { jwt } : {}),
    });
  let auth: AccountServices['authentication'];
  let users: AccountServices['users'];
  let keys: AccountServices['keys'];
  let admin: Principal;

  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
    repo = new SqliteAccountRepository(db);
    namespaces = new SqliteNamespaceRepository(db);
    hasher = new CountingHasher();
    audit = [];
    now = Date.parse('2026-03-01T10:00:00.000Z');
    jwt = new FakeJwt();
    ({ authentication: auth, users, keys } = make());
    await users.ensureServerToken(SERVER_TOKEN);
    admin = await auth.authenticate({ bearer: SERVER_TOKEN, client: 'c' });
  });
  afterEach(() => db.close());

  it('the first start makes admin (owner of local/) and registers the server token; later starts do not', async () => {
    assert.equal(admin.id, 'admin');
    assert.equal(admin.admin, true);
    assert.equal(admin.credential, serverTokenId(SERVER_TOKEN));
    assert.deepEqual(admin.roles, { local: 'owner' });
    assert.equal(admin.defaultNamespace, 'local');
    assert.deepEqual(await users.ensureServerToken(SERVER_TOKEN), { user: 'admin', created: false });
    // A new token replaces the old one.
    await users.ensureServerToken('another-server-token-abcdef');
    await assert.rejects(auth.authenticate({ bearer: SERVER_TOKEN, client: 'c' }), rejectsWith(/unknown or wrong key/));
    assert.equal((await auth.authenticate({ bearer: 'another-server-token-abcdef', client: 'c' })).id, 'admin');
  });

  it('verifies the slow hash once per key, but reads the key every time: revocation is at once', async () => {
    const k = await keys.create({ name: 'ci' }, admin);
    const before = hasher.verifies;
    for (let i = 0; i < 3; i++) assert.equal((await auth.authenticate({ apiKey: k.key, client: 'c' })).id, 'admin');
    assert.equal(hasher.verifies - before, 1, 'one slow verification for three requests');
    await repo.revokeKey(k.id, new Date(now).toISOString());
    await assert.rejects(auth.authenticate({ apiKey: k.key, client: 'c' }), rejectsWith(/was revoked at/));
    // A wrong secret for a cached id still fails.
    const wrong = `${k.id}_${'A'.repeat(43)}`;
    await assert.rejects(auth.authenticate({ bearer: wrong, client: 'c' }), rejectsWith(/unknown or wrong key/));
  });

  it('expiry and disabled users are refused with their reason; every refusal is audited', async () => {
    const { user, key } = await users.add({ name: 'alice' }, admin);
    assert.equal(user.defaultNamespace, 'alice');
    const alice = await auth.authenticate({ bearer: key.key, client: '10.0.0.1' });
    assert.deepEqual(alice.roles, { alice: 'owner' });
    const soon = await keys.create({ name: 'soon', expiresInDays: 1 }, alice);
    now += 2 * 86_400_000;
    await assert.rejects(auth.authenticate({ bearer: soon.key, client: 'c' }), rejectsWith(/expired at/));
    await users.disable('alice', admin);
    await assert.rejects(
      auth.authenticate({ bearer: key.key, client: '10.0.0.1' }),
      rejectsWith(/user alice is disabled/),
    );
    await assert.rejects(auth.authenticate({ client: 'c' }), rejectsWith(/Authentication required/));
    const refused = audit.filter((e) => e.event === 'auth.refused');
    assert.deepEqual(
      refused.map((e) => (e.details as { reason: string }).reason),
      ['expired', 'user disabled', 'missing'],
    );
    assert.equal(refused[1]?.client, '10.0.0.1');
    assert.equal(refused[1]?.principal, 'alice');
  });

  it('audits a login once per credential, and records use at most once a minute', async () => {
    const k = await keys.create({ name: 'ci' }, admin);
    const logins = (): number => audit.filter((e) => e.event === 'auth.login' && e.by?.credential === k.id).length;
    await auth.authenticate({ bearer: k.key, client: 'c' });
    await auth.authenticate({ bearer: k.key, client: 'c' });
    assert.equal(logins(), 1);
    await new Promise((r) => setImmediate(r));
    const first = (await repo.getKey(k.id))?.lastUsedAt;
    assert.equal(first, new Date(now).toISOString());
    now += 30_000;
    await auth.authenticate({ bearer: k.key, client: 'c' });
    await new Promise((r) => setImmediate(r));
    assert.equal((await repo.getKey(k.id))?.lastUsedAt, first, 'not again within the minute');
    now += 31_000;
    await auth.authenticate({ bearer: k.key, client: 'c' });
    await new Promise((r) => setImmediate(r));
    assert.equal((await repo.getKey(k.id))?.lastUsedAt, new Date(now).toISOString());
  });

  it('JWTs: refused without a verifier; the verifier says why; a new subject is made a user on first sight', async () => {
    const noJwt = make(false).authentication;
    await assert.rejects(noJwt.authenticate({ bearer: 'a.b.c', client: 'c' }), rejectsWith(/accepts API keys only/));
    jwt.tokens.set('e.x.p', 'the token has expired');
    await assert.rejects(auth.authenticate({ bearer: 'e.x.p', client: 'c' }), rejectsWith(/the token has expired/));

    await namespaces.create('team', 'admin', new Date(now).toISOString());
    const tok = (sub: string, roles?: VerifiedToken['roles']): VerifiedToken => ({
      issuer: 'https://idp',
      subject: sub,
      username: 'carol',
      tokenId: `jwt-${sub}`,
      expiresAt: Math.floor(now / 1000) + 3600,
      ...(roles ? { roles } : {}),
    });
    jwt.tokens.set('h.p.1', tok('1', { team: 'member', ghost: 'owner' }));
    jwt.tokens.set('h.p.2', tok('2'));
    const carol = await auth.authenticate({ bearer: 'h.p.1', client: 'c' });
    assert.equal(carol.id, 'carol');
    assert.equal(carol.kind, 'jwt');
    assert.equal(carol.credential, 'jwt-1');
    assert.deepEqual(carol.roles, { carol: 'owner', team: 'member' }, 'token roles only for namespaces that exist');
    assert.equal((await auth.authenticate({ bearer: 'h.p.1', client: 'c' })).id, 'carol', 'the same user next time');
    const other = await auth.authenticate({ bearer: 'h.p.2', client: 'c' });
    assert.equal(other.id, 'carol-2', 'the name is taken by another subject');
    assert.deepEqual(
      audit.filter((e) => e.event === 'user.created').map((e) => e.target),
      ['admin', 'carol', 'carol-2'],
    );
    await users.disable('carol', admin);
    await assert.rejects(auth.authenticate({ bearer: 'h.p.1', client: 'c' }), rejectsWith(/user carol is disabled/));
  });

  it("issue #35: a roles claim never grants a reserved namespace nor another user's personal one; each dropped role is audited once and logged", async () => {
    const warnings: Array<Record<string, unknown>> = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (o: Record<string, unknown>, msg: string) => void warnings.push({ ...o, msg }),
      child: () => logger,
    } as never;
    const withLog = accountServices({
      accounts: repo,
      hasher,
      namespaces,
      audit: { record: (e) => Promise.resolve(void audit.push(e)) },
      logger,
      now: () => now,
      jwt,
    }).authentication;
    await users.add({ name: 'alice' }, admin);
    await namespaces.create('team', 'admin', new Date(now).toISOString());
    jwt.tokens.set('h.p.x', {
      issuer: 'https://idp',
      subject: 'x',
      username: 'carol',
      tokenId: 'jwt-x',
      expiresAt: Math.floor(now / 1000) + 3600,
      roles: {
        local: 'owner',
        builtin: 'owner',
        system: 'admin',
        root: 'owner',
        alice: 'owner',
        team: 'member',
        carol: 'viewer',
        later: 'admin',
      },
    });
    const carol = await withLog.authenticate({ bearer: 'h.p.x', client: '10.1.2.3' });
    assert.deepEqual(
      carol.roles,
      { carol: 'owner', team: 'member' },
      "the token works with the roles it may claim; its own namespace stays the user's (owner)",
    );
    const dropped = () => audit.filter((e) => e.event === 'auth.role-dropped');
    assert.deepEqual(
      dropped().map((e) => [e.namespace, (e.details as { role: string; reason: string }).reason, e.outcome]),
      [
        ['local', 'reserved namespace', 'refused'],
        ['builtin', 'reserved namespace', 'refused'],
        ['system', 'reserved namespace', 'refused'],
        ['root', 'reserved namespace', 'refused'],
        ['alice', "another user's personal namespace", 'refused'],
      ],
    );
    assert.ok(dropped().every((e) => e.principal === 'carol' && e.credential === 'jwt-x' && e.client === '10.1.2.3'));
    assert.deepEqual(
      warnings.map((w) => [w['msg'], w['namespace'], w['user']]),
      dropped().map((e) => ["a role from the token's roles claim was dropped", e.namespace, 'carol']),
    );
    // Once per token: the next request drops the same roles without a new record.
    assert.deepEqual((await withLog.authenticate({ bearer: 'h.p.x', client: 'c' })).roles, carol.roles);
    assert.equal(dropped().length, 5);
    // A namespace that does not exist yet is ignored quietly, and applies once it is created.
    await namespaces.create('later', 'admin', new Date(now).toISOString());
    assert.deepEqual((await withLog.authenticate({ bearer: 'h.p.x', client: 'c' })).roles, {
      carol: 'owner',
      team: 'member',
      later: 'admin',
    });
    assert.equal(dropped().length, 5);
  });

  it('a JWT is verified once while it is valid; past its expiry it is verified again', async () => {
    const exp = Math.floor(now / 1000) + 60;
    jwt.tokens.set('c.a.1', {
      issuer: 'https://idp',
      subject: 'd',
      username: 'dora',
      tokenId: 'jwt-d',
      expiresAt: exp,
    });
    for (let i = 0; i < 3; i++) assert.equal((await auth.authenticate({ bearer: 'c.a.1', client: 'c' })).id, 'dora');
    assert.equal(jwt.calls, 1, 'one signature check for three requests');
    now += 61_000;
    jwt.tokens.set('c.a.1', 'the token has expired');
    await assert.rejects(auth.authenticate({ bearer: 'c.a.1', client: 'c' }), rejectsWith(/the token has expired/));
    assert.equal(jwt.calls, 2);
  });

  it('a grant is reused while nothing changed; revoking, disabling, memberships and namespaces end it', async () => {
    const { key } = await users.add({ name: 'erin' }, admin);
    const erin = { bearer: key.key, client: 'c' };
    const fresh = async () => {
      const g = await auth.grant(erin);
      assert.ok(auth.reuse(g), 'reusable right after the check');
      return g;
    };
    let g = await fresh();
    assert.equal(auth.reuse(g)?.id, 'erin');
    await namespaces.create('team', 'admin', new Date(now).toISOString());
    assert.equal(auth.reuse(g), undefined, 'a new namespace');
    g = await fresh();
    await namespaces.setMember('team', 'erin', 'member', new Date(now).toISOString());
    assert.equal(auth.reuse(g), undefined, 'a membership added');
    g = await fresh();
    assert.deepEqual(g.principal.roles, { erin: 'owner', team: 'member' });
    await namespaces.setMember('team', 'erin', 'owner', new Date(now).toISOString());
    assert.equal(auth.reuse(g), undefined, 'a role changed');
    g = await fresh();
    await namespaces.removeMember('team', 'erin');
    assert.equal(auth.reuse(g), undefined, 'a membership removed');
    g = await fresh();
    await users.disable('erin', admin);
    assert.equal(auth.reuse(g), undefined, 'the user disabled');
    await assert.rejects(auth.grant(erin), rejectsWith(/user erin is disabled/));
    await users.enable('erin', admin);
    g = await fresh();
    await repo.revokeKey(key.id, new Date(now).toISOString());
    assert.equal(auth.reuse(g), undefined, 'the key revoked');
    await assert.rejects(auth.grant(erin), rejectsWith(/was revoked at/));
  });

  it('a grant ends when its key or JWT expires; a verifier that lets a token without exp through is not trusted', async () => {
    const soon = await keys.create({ name: 'soon', expiresInDays: 1 }, admin);
    const g = await auth.grant({ bearer: soon.key, client: 'c' });
    assert.equal(g.expiresAt, Date.parse(soon.expiresAt ?? ''));
    assert.ok(auth.reuse(g));
    now = (g.expiresAt ?? 0) - 1;
    assert.ok(auth.reuse(g), 'still valid a millisecond before');
    now += 1;
    assert.equal(auth.reuse(g), undefined, 'expired');
    const exp = Math.floor(now / 1000) + 60;
    jwt.tokens.set('c.a.2', { issuer: 'https://idp', subject: 'f', username: 'fay', tokenId: 'jwt-f', expiresAt: exp });
    const made = await auth.grant({ bearer: 'c.a.2', client: 'c' });
    assert.equal(auth.reuse(made), undefined, 'the first sight made the user: a change, checked again');
    const j = await auth.grant({ bearer: 'c.a.2', client: 'c' });
    assert.equal(auth.reuse(j)?.id, 'fay');
    now = exp * 1000;
    assert.equal(auth.reuse(j), undefined, 'the JWT expired');
    jwt.tokens.set('c.a.3', { issuer: 'https://idp', subject: 'f', username: 'fay', tokenId: 'jwt-f3' } as never);
    await assert.rejects(auth.grant({ bearer: 'c.a.3', client: 'c' }), rejectsWith(/the token has no exp claim/));
  });

  it("another connection's write to the account store ends every grant", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ca-auth-'));
    const file = join(dir, 'db.sqlite');
    const onFile = await openDatabase({ file });
    try {
      const fileRepo = new SqliteAccountRepository(onFile);
      const { authentication: other, users: otherUsers } = accountServices({
        accounts: fileRepo,
        hasher,
        namespaces: new SqliteNamespaceRepository(onFile),
        audit: { record: () => Promise.resolve() },
        logger: silent,
        now: () => now,
      });
      await otherUsers.ensureServerToken(SERVER_TOKEN);
      const g = await other.grant({ bearer: SERVER_TOKEN, client: 'c' });
      assert.ok(other.reuse(g));
      const behind = new Database(file);
      try {
        behind.prepare('UPDATE api_keys SET revoked_at = ?').run(new Date(now).toISOString());
      } finally {
        behind.close();
      }
      assert.equal(other.reuse(g), undefined);
      await assert.rejects(other.grant({ bearer: SERVER_TOKEN, client: 'c' }), rejectsWith(/was revoked at/));
    } finally {
      await onFile.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('users: administrators only, name rules, reserved names, not yourself', async () => {
    const { key } = await users.add({ name: 'alice' }, admin);
    const alice = await auth.authenticate({ bearer: key.key, client: 'c' });
    await assert.rejects(users.add({ name: 'bob' }, alice), /server administrators/);
    await assert.rejects(users.list(alice), /server administrators/);
    for (const name of ['root', 'builtin', 'local', 'system', 'internal', 'admin'])
      await assert.rejects(users.add({ name }, admin), /reserved/);
    await assert.rejects(users.add({ name: 'Bad Name' }, admin), /not valid/);
    await assert.rejects(users.disable('admin', admin), /cannot disable yourself/);
    await assert.rejects(users.disable('nobody', admin), /User nobody was not found/);
    assert.deepEqual(
      (await users.list(admin)).users.map((u) => u.name),
      ['admin', 'alice'],
    );
  });

  it("keys: yours, or anyone's for administrators; someone else's key looks missing; no hashes", async () => {
    const { key } = await users.add({ name: 'alice' }, admin);
    const alice = await auth.authenticate({ bearer: key.key, client: 'c' });
    const adminKey = await keys.create({ name: 'ops' }, admin);
    await assert.rejects(keys.revoke(adminKey.id, alice), /was not found/);
    await assert.rejects(keys.create({ name: 'x', user: 'admin' }, alice), /server administrators/);
    await assert.rejects(keys.list({ user: 'admin' }, alice), /server administrators/);
    const forAlice = await keys.create({ name: 'made-for-alice', user: 'alice' }, admin);
    assert.equal(forAlice.user, 'alice');
    const mine = await keys.list({}, alice);
    assert.deepEqual(mine.keys.map((k) => k.name).sort(), ['default', 'made-for-alice']);
    assert.ok(mine.keys.every((k) => !('hash' in k)));
    const revoked = await keys.revoke(forAlice.id, admin);
    assert.ok(revoked.revokedAt);
    await assert.rejects(keys.create({ name: 'x', expiresAt: '2000-01-01T00:00:00Z' }, alice), /in the future/);
    assert.deepEqual(
      audit.filter((e) => e.event === 'key.revoked').map((e) => e.target),
      [forAlice.id],
    );
  });

  it('local mode: whoami answers the local user; keys and users are refused clearly', async () => {
    const me = await users.whoami(LOCAL_PRINCIPAL);
    assert.equal(me.user, 'local');
    assert.equal(me.kind, 'local');
    assert.deepEqual(me.namespaces, [{ name: 'local', role: 'owner' }]);
    for (const p of [
      keys.create({ name: 'x' }, LOCAL_PRINCIPAL),
      keys.list({}, LOCAL_PRINCIPAL),
      users.add({ name: 'bob' }, LOCAL_PRINCIPAL),
      users.list(LOCAL_PRINCIPAL),
    ])
      await assert.rejects(p, /local mode has one user and no keys; run `agents serve` for a server/);
  });
});
