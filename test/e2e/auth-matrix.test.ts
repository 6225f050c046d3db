/**
 * The authorization matrix (issue #11), generated from the method table: every method × role
 * (owner, admin, member, viewer, none) × namespace (own, foreign) × credential (API key, JWT,
 * expired JWT, JWT for another audience, revoked key, none), over HTTP against a real
 * `agents serve` and a local fake OIDC issuer. Zero unauthorized successes; a foreign namespace is
 * answered exactly as a missing one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONTRACTS } from '../../src/protocol/client/index.ts';
import type { MethodContract } from '../../src/protocol/a2a/contract.ts';
import { permissionLevel, ROLES, type Role } from '../../src/domain/permissions.ts';
import { startFakeOidc, type FakeOidc } from '../support/fake-oidc.ts';
import { startTeamServer, type TeamServer, type RpcAnswer } from '../support/team-server.ts';

const OWN = 'team-a';
const FOREIGN = 'team-b';
const MISSING = 'team-zz';
const AUDIENCE = 'cleveragents-matrix';

type Who = Role | 'none';

/**
 * What each role may do, written out here rather than read from the role table: a change of the
 * table that the server obeys must show as a failure.
 */
const READS = ['task:read', 'session:read', 'registry:read', 'plan:read'];
const WRITES = ['task:write', 'session:write', 'registry:write', 'plan:write'];
const EXPECTED: Record<Role, readonly string[]> = {
  viewer: READS,
  member: [...READS, ...WRITES],
  admin: [...READS, ...WRITES, 'namespace:manage'],
  owner: [...READS, ...WRITES, 'namespace:manage', 'namespace:delete'],
};
const roleGrants = (role: Role, permission: string): boolean => EXPECTED[role].includes(permission);
const WHO: readonly Who[] = [...ROLES, 'none'];

/** The reason an error names (v1.0 puts it in an ErrorInfo detail, the extension in data). */
function reasonOf(r: RpcAnswer): string | undefined {
  const d = r.error?.data;
  if (Array.isArray(d)) return (d[0] as { reason?: string } | undefined)?.reason;
  return (d as { reason?: string } | undefined)?.reason;
}

/** An answer with the namespace's name and the per-request parts taken out, to compare two. */
function shape(r: RpcAnswer, ns: string): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (k !== 'correlationId' && k !== 'id') out[k] = strip(x);
      return out;
    }
    return v;
  };
  return JSON.stringify(strip(r)).split(ns).join('<ns>');
}

/** Params that point a method at a namespace. Extra `__probe` makes strict schemas refuse: no side effects. */
function paramsFor(m: MethodContract, ns: string): Record<string, unknown> {
  const scope = m.scope ?? 'tenant';
  if (typeof scope === 'object') {
    return scope.form === 'namespace'
      ? { [scope.param]: ns, __probe: 1 }
      : // An entity name: services answer for it (no probe, so they get to look).
        { [scope.param]: `${ns}/shared` };
  }
  return { tenant: ns, __probe: 1 };
}

const granted = (r: RpcAnswer): boolean =>
  !r.error || !['FORBIDDEN', 'UNAUTHENTICATED'].includes(reasonOf(r) ?? '') || false;

describe('the authorization matrix, from the method table, over HTTP', () => {
  let oidc: FakeOidc;
  let server: TeamServer;
  /** Credentials per role: an API key of a user with that role in OWN, and a JWT whose claim gives it. */
  const keys = new Map<Who, string>();
  const jwts = new Map<Who, string>();
  let revokedKey: string;
  let expiredJwt: string;
  let otherAudienceJwt: string;
  let noExpJwt: string;
  let monthLongJwt: string;
  let adminKey: string;

  before(async () => {
    oidc = await startFakeOidc();
    server = await startTeamServer({ oidc: { issuer: oidc.issuer, audience: AUDIENCE, rolesClaim: 'ca_roles' } });
    adminKey = server.adminToken;
    await server.as(adminKey).ok('_cleveragents/namespace/create', { name: OWN });
    await server.as(adminKey).ok('_cleveragents/namespace/create', { name: FOREIGN });
    // Something to find in the foreign namespace: it must still look missing.
    await server.as(adminKey).ok('_cleveragents/registry/actors/add', {
      definition: { name: `${FOREIGN}/shared`, provider: 'builtin', model: 'echo' },
    });
    for (const who of WHO) {
      const user = `m-${who}`;
      const key = await server.addUser(adminKey, user);
      if (who !== 'none')
        await server.as(adminKey).ok('_cleveragents/namespace/add-member', { namespace: OWN, user, role: who });
      keys.set(who, key);
      jwts.set(
        who,
        await oidc.issue(
          {
            sub: `sub-${who}`,
            preferred_username: `j-${who}`,
            ...(who !== 'none' ? { ca_roles: { [OWN]: who } } : {}),
          },
          { audience: AUDIENCE },
        ),
      );
    }
    revokedKey = await server.addUser(adminKey, 'm-revoked');
    await server.revokeAllKeys(adminKey, 'm-revoked');
    expiredJwt = await oidc.issue(
      { sub: 'sub-old', preferred_username: 'j-old' },
      { audience: AUDIENCE, expiresIn: -60 },
    );
    otherAudienceJwt = await oidc.issue({ sub: 'sub-aud', preferred_username: 'j-aud' }, { audience: 'someone-else' });
    noExpJwt = await oidc.issue(
      { sub: 'sub-noexp', preferred_username: 'j-noexp', ca_roles: { [OWN]: 'owner' } },
      { audience: AUDIENCE, expiresIn: null },
    );
    monthLongJwt = await oidc.issue(
      { sub: 'sub-month', preferred_username: 'j-month', ca_roles: { [OWN]: 'owner' } },
      { audience: AUDIENCE, expiresIn: 30 * 86_400 },
    );
  });
  after(async () => {
    await server?.close();
    await oidc?.close();
  });

  const methods = (): MethodContract[] => CONTRACTS as unknown as MethodContract[];

  it('without a valid credential every method is refused with 401, whatever it is', async () => {
    const bad: Array<[string, string | undefined]> = [
      ['no credential', undefined],
      ['a revoked key', revokedKey],
      ['an expired JWT', expiredJwt],
      ['a JWT for another audience', otherAudienceJwt],
      ['a JWT without exp', noExpJwt],
      ['a JWT valid for 30 days', monthLongJwt],
      ['a made-up key', 'ca_aaaaaaaaaaaa_' + 'x'.repeat(43)],
    ];
    for (const [what, cred] of bad) {
      for (const m of methods()) {
        const r = await server.as(cred).call(m.name, paramsFor(m, OWN));
        assert.equal(r.status, 401, `${m.name} with ${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        assert.equal(reasonOf(r.body), 'UNAUTHENTICATED', `${m.name} with ${what}`);
        assert.equal(r.body.result, undefined, `${m.name} with ${what} succeeded`);
      }
    }
  });

  for (const cred of ['API key', 'JWT'] as const) {
    it(`with ${cred === 'API key' ? 'an API key' : 'a JWT'}: each role gets exactly what the table grants; foreign looks missing`, async () => {
      let checked = 0;
      for (const who of WHO) {
        const as = server.as(cred === 'API key' ? keys.get(who) : jwts.get(who));
        for (const m of methods()) {
          const level = permissionLevel(m.permission);
          const own = await as.call(m.name, paramsFor(m, OWN));
          const where = `${m.name} as ${who} (${cred})`;
          assert.notEqual(own.status, 401, `${where}: authenticated`);
          if (level === 'caller') {
            // Authentication is enough (asked without a tenant).
            const r = await as.call(m.name, { __probe: 1 });
            assert.ok(granted(r.body), `${where}: ${JSON.stringify(r.body.error)}`);
          } else if (level === 'server') {
            assert.equal(reasonOf(own.body), 'FORBIDDEN', `${where}: only administrators`);
          } else if (who !== 'none' && roleGrants(who, m.permission)) {
            assert.ok(granted(own.body), `${where}: granted, got ${JSON.stringify(own.body.error)}`);
            assert.ok(
              !(reasonOf(own.body) === 'NOT_FOUND' && own.body.error?.message === `Namespace ${OWN} was not found`),
              `${where}: its own namespace found`,
            );
          } else if (who !== 'none') {
            assert.ok(own.body.error, `${where}: refused, not done`);
            assert.equal(reasonOf(own.body), 'FORBIDDEN', `${where}: ${JSON.stringify(own.body.error)}`);
          }
          if (level === 'namespace') {
            // The foreign namespace (exists, holds an entity) and a missing one: the same answer.
            const foreign = await as.call(m.name, paramsFor(m, FOREIGN));
            const missing = await as.call(m.name, paramsFor(m, MISSING));
            assert.ok(foreign.body.error, `${where}: nothing done in a foreign namespace`);
            assert.equal(foreign.status, missing.status, `${where}: same status`);
            assert.equal(shape(foreign.body, FOREIGN), shape(missing.body, MISSING), `${where}: foreign = missing`);
            if (who === 'none') {
              // Not a member of OWN either: OWN looks missing too.
              assert.equal(shape(own.body, OWN), shape(missing.body, MISSING), `${where}: non-member = missing`);
            }
          }
          checked++;
        }
      }
      assert.ok(checked >= WHO.length * 100, `the whole table was walked (${checked})`);
    });
  }

  it('issue #35: a JWT without exp is refused, saying the exp claim is missing', async () => {
    const r = await server.as(noExpJwt).call('_cleveragents/whoami', {});
    assert.equal(r.status, 401);
    assert.equal(reasonOf(r.body), 'UNAUTHENTICATED');
    assert.equal(r.body.error?.message, 'the token has no exp claim (this server accepts only tokens that expire)');
  });

  it('issue #35: a JWT valid for longer than 24 h is refused, saying how long and the limit', async () => {
    const r = await server.as(monthLongJwt).call('_cleveragents/whoami', {});
    assert.equal(r.status, 401);
    assert.equal(reasonOf(r.body), 'UNAUTHENTICATED');
    assert.equal(
      r.body.error?.message,
      "the token's exp claim is too far ahead: it is valid for 30 d, more than the 24 h this server accepts",
    );
    // A token of a normal lifetime from the same issuer works (the positive path).
    const fine = await oidc.issue(
      { sub: 'sub-month', preferred_username: 'j-month', ca_roles: { [OWN]: 'owner' } },
      { audience: AUDIENCE, expiresIn: 8 * 3600 },
    );
    const me = await server.as(fine).ok<{ user: string }>('_cleveragents/whoami', {});
    assert.equal(me.user, 'j-month');
  });

  it("issue #35: a roles claim cannot grant local:owner nor a role in another user's personal namespace — those roles are dropped and audited once, the token keeps its others", async () => {
    const greedy = await oidc.issue(
      {
        sub: 'sub-greedy',
        preferred_username: 'j-greedy',
        ca_roles: { local: 'owner', builtin: 'owner', system: 'admin', 'm-viewer': 'owner', [OWN]: 'member' },
      },
      { audience: AUDIENCE },
    );
    const as = server.as(greedy);
    for (let i = 0; i < 2; i++) {
      const me = await as.ok<{ user: string; namespaces: Array<{ name: string; role: string }> }>(
        '_cleveragents/whoami',
        {},
      );
      assert.equal(me.user, 'j-greedy');
      assert.deepEqual(me.namespaces, [
        { name: 'j-greedy', role: 'owner' },
        { name: OWN, role: 'member' },
      ]);
    }
    // local/ and m-viewer's namespace exist, yet look exactly like a namespace that does not.
    const missing = await as.call('_cleveragents/namespace/show', { name: MISSING });
    assert.equal(reasonOf(missing.body), 'NOT_FOUND');
    for (const ns of ['local', 'm-viewer']) {
      const r = await as.call('_cleveragents/namespace/show', { name: ns });
      assert.equal(r.status, missing.status, ns);
      assert.equal(shape(r.body, ns), shape(missing.body, MISSING), `${ns} looks missing`);
      const write = await as.call('_cleveragents/registry/actors/add', {
        definition: { name: `${ns}/planted`, provider: 'builtin', model: 'echo' },
      });
      assert.ok(write.body.error, `${ns}: nothing added (${JSON.stringify(write.body)})`);
    }
    // The positive path: the role it may claim works.
    await as.ok('_cleveragents/registry/actors/add', {
      definition: { name: `${OWN}/greedy-actor`, provider: 'builtin', model: 'echo' },
    });
    const audit = await server.as(adminKey).ok<{
      events: Array<{
        principal?: string;
        namespace?: string;
        outcome: string;
        details?: { role?: string; reason?: string };
      }>;
    }>('_cleveragents/audit/list', { event: 'auth.role-dropped' });
    const mine = audit.events.filter((e) => e.principal === 'j-greedy');
    assert.deepEqual(
      mine.map((e) => [e.namespace, e.details?.role, e.details?.reason, e.outcome]).sort(),
      [
        ['builtin', 'owner', 'reserved namespace', 'refused'],
        ['local', 'owner', 'reserved namespace', 'refused'],
        ['m-viewer', 'owner', "another user's personal namespace", 'refused'],
        ['system', 'admin', 'reserved namespace', 'refused'],
      ],
      'each dropped role once, though the token was used many times',
    );
  });

  it('an administrator passes every server-level method', async () => {
    const as = server.as(adminKey);
    for (const m of methods().filter((x) => permissionLevel(x.permission) === 'server')) {
      const r = await as.call(m.name, { __probe: 1 });
      assert.ok(granted(r.body), `${m.name}: ${JSON.stringify(r.body.error)}`);
    }
  });
});
