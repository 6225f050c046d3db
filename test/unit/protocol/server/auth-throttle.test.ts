/**
 * Issue #35, point 8: the failed-login throttle (AuthThrottle, authenticateRequest) in front of
 * the real accounts service (SQLite in memory, scrypt counted): one attacker behind a shared
 * address cannot lock out a colleague's valid credential, cannot make the server hash without
 * bound, and a store outage is not a failed login.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { AccountRepository, Principal, VerifiedToken } from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import {
  openDatabase,
  SqliteAccountRepository,
  SqliteNamespaceRepository,
} from '../../../../src/infrastructure/index.ts';
import {
  authenticateRequest,
  AuthThrottle,
  FacadeAuthenticator,
  presentedOf,
  throttledFor,
} from '../../../../src/protocol/server/auth.ts';
import { accountServices, type AccountServices } from '../../../support/account-services.ts';
import { CountingHasher } from '../../../support/fakes/accounts.ts';

const SERVER_TOKEN = 'the-server-token-0123456789';
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as never;
const WINDOW = 60_000;

/** What one attempt came to: ok, a refusal (401-style), throttled (429) or unavailable (503). */
type Outcome = 'ok' | 'refused' | 'throttled' | 'unavailable';

describe('issue #35: the auth throttle in front of the accounts service', () => {
  let hasher: CountingHasher;
  let now: number;
  let auth: AccountServices['authentication'];
  let users: AccountServices['users'];
  let keys: AccountServices['keys'];
  let throttle: AuthThrottle;
  let authn: FacadeAuthenticator;
  let admin: Principal;
  /** Whether the account store is down, and how it fails. */
  let down: 'raw' | 'app' | undefined;

  const attempt = async (credential: string | undefined, client: string): Promise<Outcome> => {
    try {
      await authenticateRequest(
        authn,
        throttle,
        { authorization: credential === undefined ? undefined : `Bearer ${credential}`, client },
        undefined,
      );
      return 'ok';
    } catch (err) {
      if (throttledFor(err) !== undefined) return 'throttled';
      assert.ok(err instanceof AppError, String(err));
      if (err.reason === 'UNAVAILABLE') return 'unavailable';
      assert.equal(err.reason, 'UNAUTHENTICATED');
      return 'refused';
    }
  };
  /** Runs an attempt and says how many slow hashes it cost. */
  const costOf = async (credential: string, client: string): Promise<[Outcome, number]> => {
    const before = hasher.verifies;
    const outcome = await attempt(credential, client);
    return [outcome, hasher.verifies - before];
  };
  const wrongSecretFor = (key: string): string => `${key.slice(0, 15)}_${'A'.repeat(43)}`;
  const newKey = async (name: string): Promise<string> => (await keys.create({ name }, admin)).key;

  beforeEach(async () => {
    const db = await openDatabase({ file: ':memory:' });
    const real = new SqliteAccountRepository(db);
    down = undefined;
    // The store as the PostgreSQL runner fails (AppError UNAVAILABLE) or as a raw driver error.
    const repo = new Proxy(real, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'lookupKey' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
        return (id: string) => {
          if (down === 'raw') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
          if (down === 'app')
            return Promise.reject(new AppError('UNAVAILABLE', 'Storage is unavailable: the database does not answer'));
          return real.lookupKey(id);
        };
      },
    }) as AccountRepository;
    hasher = new CountingHasher();
    now = Date.parse('2026-03-01T10:00:00.000Z');
    ({
      authentication: auth,
      users,
      keys,
    } = accountServices({
      accounts: repo,
      hasher,
      namespaces: new SqliteNamespaceRepository(db),
      audit: { record: () => Promise.resolve() },
      logger: silent,
      now: () => now,
    }));
    await users.ensureServerToken(SERVER_TOKEN);
    admin = await auth.authenticate({ bearer: SERVER_TOKEN, client: 'setup' });
    throttle = new AuthThrottle({ maxFailures: 3, maxSlowHashes: 6, windowMs: WINDOW, now: () => now });
    authn = new FacadeAuthenticator(auth);
  });

  it("a NAT neighbour's wrong tokens do not lock out a colleague's valid API key; the guessable server token is refused unchecked", async () => {
    const bob = (await users.add({ name: 'bob' }, admin)).key.key;
    const alice = (await users.add({ name: 'alice' }, admin)).key.key;
    for (let i = 0; i < 3; i++) assert.equal(await attempt('wrong-token-wrong-token', 'nat'), 'refused');
    assert.equal(await attempt('wrong-token-wrong-token', 'nat'), 'throttled');
    // Never used before: its slow hash runs, and it is accepted.
    assert.deepEqual(await costOf(bob, 'nat'), ['ok', 1]);
    assert.equal(await attempt(alice, 'nat'), 'ok');
    assert.equal(await attempt(bob, 'nat'), 'ok', 'again');
    // A made-up key: counted apart from the guesses at the token, checked (one read, no hash), refused.
    assert.deepEqual(await costOf(`ca_aaaaaaaaaaaa_${'x'.repeat(43)}`, 'nat'), ['refused', 0]);
    // The server token is the one credential a person chooses: from the address it is not checked.
    assert.equal(await attempt(SERVER_TOKEN, 'nat'), 'throttled');
    assert.equal(await attempt(SERVER_TOKEN, 'elsewhere'), 'ok');
    // A success does not reset the address (an attacker's own key would otherwise clear his count).
    assert.equal(await attempt('wrong-token-wrong-token', 'nat'), 'throttled');
    now += WINDOW;
    assert.equal(await attempt(SERVER_TOKEN, 'nat'), 'ok', 'the window ended');
  });

  it("wrong secrets aimed at one key id are throttled from that address; the key's owner is accepted there, verified or not", async () => {
    const dave = (await users.add({ name: 'dave' }, admin)).key.key;
    const erin = (await users.add({ name: 'erin' }, admin)).key.key;
    for (let i = 0; i < 3; i++) assert.deepEqual(await costOf(wrongSecretFor(dave), 'nat'), ['refused', 1]);
    assert.equal(await attempt(wrongSecretFor(dave), 'nat'), 'throttled');
    // dave's key was never verified by this process: its slow hash runs (the address's hash
    // budget is not spent) and it is accepted, although its id is throttled from there.
    assert.deepEqual(await costOf(dave, 'nat'), ['ok', 1]);
    assert.deepEqual(await costOf(dave, 'nat'), ['ok', 0], 'verified once, it needs no slow hash');
    assert.equal(await attempt(wrongSecretFor(dave), 'nat'), 'refused', "a success reset the id's counter");
    // Other keys from the same address are checked in full and counted apart.
    assert.deepEqual(await costOf(erin, 'nat'), ['ok', 1]);
    assert.equal(await attempt(wrongSecretFor(erin), 'nat'), 'refused');
  });

  it('an attacker with many key ids (his own keys count) cannot make the server hash more than maxSlowHashes a window', async () => {
    const keys = await Promise.all(['k1', 'k2', 'k3', 'k4', 'k5'].map(newKey));
    const spare = await newKey('spare');
    const used = await newKey('used');
    assert.equal(await attempt(used, 'home'), 'ok');
    const before = hasher.verifies;
    for (const key of keys) for (let i = 0; i < 3; i++) await attempt(wrongSecretFor(key), 'nat');
    assert.equal(hasher.verifies - before, 6, 'fifteen wrong secrets, six slow hashes');
    // Past the budget, a key needing the slow hash is refused without it; a verified one is checked.
    assert.deepEqual(await costOf(spare, 'nat'), ['throttled', 0]);
    assert.deepEqual(await costOf(used, 'nat'), ['ok', 0]);
    assert.deepEqual(await costOf(spare, 'next-door'), ['ok', 1], 'the budget is per address');
    now += WINDOW;
    assert.deepEqual(await costOf(wrongSecretFor(keys[0] ?? ''), 'nat'), ['refused', 1], 'a new window');
  });

  it('unknown ids and malformed keys are refused with no slow hash at all', async () => {
    const before = hasher.verifies;
    const strangers = [
      `ca_zzzzzzzzzzzz_${'x'.repeat(43)}`,
      'ca_short_secret',
      'not-a-key-at-all-but-long',
      `${'A'.repeat(43)}`,
    ];
    for (let i = 0; i < 20; i++) assert.equal(await attempt(strangers[i % strangers.length], `10.0.0.${i}`), 'refused');
    assert.equal(hasher.verifies, before);
  });

  it('a store outage is not a failed login: answered UNAVAILABLE (503), never counted, and the key works when the store is back', async () => {
    const bob = (await users.add({ name: 'bob' }, admin)).key.key;
    for (const how of ['raw', 'app'] as const) {
      down = how;
      for (let i = 0; i < 10; i++) assert.equal(await attempt(bob, 'nat'), 'unavailable', `${how} ${i}`);
      assert.equal(await attempt('wrong-token-wrong-token', 'nat'), 'unavailable');
    }
    assert.equal(throttle.size, 0, 'nothing counted');
    down = undefined;
    assert.equal(await attempt(bob, 'nat'), 'ok');
    assert.equal(await attempt(SERVER_TOKEN, 'nat'), 'ok');
  });

  it("a JWT is counted by the issuer and subject it claims: one subject's refusals do not throttle another's valid token", async () => {
    const claims = (sub: string, n: number): string =>
      `h.${Buffer.from(JSON.stringify({ iss: 'https://idp', sub })).toString('base64url')}.${n}`;
    const valid = new Map<string, VerifiedToken>();
    const db = await openDatabase({ file: ':memory:' });
    const { authentication } = accountServices({
      accounts: new SqliteAccountRepository(db),
      hasher,
      namespaces: new SqliteNamespaceRepository(db),
      audit: { record: () => Promise.resolve() },
      logger: silent,
      now: () => now,
      jwt: {
        verify: (token) => {
          const t = valid.get(token);
          return t ? Promise.resolve(t) : Promise.reject(new AppError('UNAUTHENTICATED', 'the token is not valid'));
        },
      },
    });
    authn = new FacadeAuthenticator(authentication);
    const bobs = claims('bob', 0);
    valid.set(bobs, {
      issuer: 'https://idp',
      subject: 'bob',
      username: 'bob',
      tokenId: 'jwt-bob',
      expiresAt: Math.floor(now / 1000) + 3600,
    });
    // Forged tokens claiming to be carol, from bob's address.
    for (let i = 1; i <= 3; i++) assert.equal(await attempt(claims('carol', i), 'nat'), 'refused');
    assert.equal(await attempt(claims('carol', 4), 'nat'), 'throttled');
    assert.equal(await attempt(claims('bob', 9), 'nat'), 'refused', "a bad token for bob is bob's count, not carol's");
    assert.equal(await attempt(bobs, 'nat'), 'ok', "bob's valid token");
    assert.equal(await attempt(claims('carol', 6), 'nat'), 'throttled', "bob's success does not reset carol's count");
    assert.equal(await attempt(claims('carol', 5), 'elsewhere'), 'refused', 'another address');
    await db.close();
  });

  it('a request without credentials is refused but is not a guess', async () => {
    for (let i = 0; i < 10; i++) assert.equal(await attempt(undefined, 'nat'), 'refused');
    assert.equal(throttle.size, 0);
    assert.equal(await attempt(SERVER_TOKEN, 'nat'), 'ok');
  });
});

describe('AuthThrottle', () => {
  const KEY = { kind: 'key', id: 'ca_aaaaaaaaaaaa' } as const;
  const OTHER = { kind: 'other' } as const;
  const JWT = { kind: 'jwt', id: 'https://issuer alice' } as const;

  it('past maxFailures the server token is refused unchecked from that address; keys and JWTs are counted apart, until the window ends', () => {
    let now = 1_000_000;
    const t = new AuthThrottle({ maxFailures: 3, windowMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(t.admit('a', OTHER), { refuse: 0, slowHash: true, retryAfter: 0 });
      t.failed('a', OTHER, false);
    }
    assert.deepEqual(t.admit('a', OTHER), { refuse: 60, slowHash: false, retryAfter: 60 });
    assert.deepEqual(
      t.admit('a', JWT),
      { refuse: 0, slowHash: true, retryAfter: 0 },
      "guesses at the token are not a JWT's",
    );
    assert.deepEqual(t.admit('a', KEY), { refuse: 0, slowHash: true, retryAfter: 0 }, "nor a key's");
    assert.deepEqual(t.admit('b', OTHER), { refuse: 0, slowHash: true, retryAfter: 0 }, 'another address');
    now += 45_000;
    assert.equal(t.admit('a', OTHER).refuse, 15);
    now += 15_000;
    assert.equal(t.admit('a', OTHER).refuse, 0, 'the window ended');
    assert.equal(t.size, 0, 'and its counter expired');
  });

  it('keys on the credential: a key by its id, a JWT by its issuer and subject, each with the address', () => {
    const t = new AuthThrottle({ maxFailures: 2 });
    const otherKey = { kind: 'key', id: 'ca_bbbbbbbbbbbb' } as const;
    const otherJwt = { kind: 'jwt', id: 'https://issuer bob' } as const;
    for (const p of [KEY, JWT]) for (let i = 0; i < 2; i++) t.failed('a', p, false);
    assert.equal(t.admit('a', KEY).retryAfter, 60);
    assert.equal(t.admit('a', JWT).retryAfter, 60);
    assert.equal(t.admit('a', KEY).refuse, 0, 'a key is still checked');
    assert.equal(t.admit('a', JWT).refuse, 0, 'a JWT is still checked');
    assert.deepEqual(t.admit('a', otherKey), { refuse: 0, slowHash: true, retryAfter: 0 }, 'another key');
    assert.deepEqual(t.admit('a', otherJwt), { refuse: 0, slowHash: true, retryAfter: 0 }, 'another subject');
    assert.deepEqual(t.admit('a', OTHER), { refuse: 0, slowHash: true, retryAfter: 0 }, 'the server token');
    assert.deepEqual(t.admit('b', KEY), { refuse: 0, slowHash: true, retryAfter: 0 }, 'another address');
    t.succeeded('a', KEY);
    t.succeeded('a', JWT);
    assert.equal(t.admit('a', KEY).retryAfter, 0, "a success resets the key's own counter");
    assert.equal(t.admit('a', JWT).retryAfter, 0, "and the JWT's");
  });

  it("wrong secrets that cost the slow hash are bounded per address for all key ids; a key's own refusals do not stop its hash", () => {
    const t = new AuthThrottle({ maxFailures: 2, maxSlowHashes: 3 });
    t.failed('a', KEY, true);
    t.failed('a', KEY, true);
    assert.deepEqual(
      t.admit('a', KEY),
      { refuse: 0, slowHash: true, retryAfter: 60 },
      'its owner may still be checked',
    );
    const other = { kind: 'key', id: 'ca_bbbbbbbbbbbb' } as const;
    t.failed('a', other, true);
    assert.equal(t.admit('a', { kind: 'key', id: 'ca_cccccccccccc' }).slowHash, false, 'the address spent its hashes');
    assert.equal(t.admit('b', KEY).slowHash, true, 'that key from elsewhere');
  });

  it('keeps its table bounded whatever the number of addresses', () => {
    let now = 0;
    const t = new AuthThrottle({ maxFailures: 1, maxEntries: 100, now: () => now });
    for (let i = 0; i < 10_000; i++) {
      t.failed(`10.0.${i >> 8}.${i & 255}`, OTHER, false);
      now += 1;
    }
    assert.ok(t.size <= 100, `size ${t.size}`);
    assert.ok(t.admit('10.0.39.15', OTHER).refuse > 0, 'the newest addresses are still throttled');
  });

  it('tells credentials apart as the accounts service reads them: X-API-Key first, a JWT only as a bearer', () => {
    const key = `ca_abcdefghijkl_${'x'.repeat(43)}`;
    assert.equal(presentedOf({ client: 'c' }), undefined);
    assert.equal(presentedOf({ client: 'c', authorization: '', apiKey: '  ' }), undefined);
    assert.deepEqual(presentedOf({ client: 'c', authorization: `Bearer ${key}` }), {
      kind: 'key',
      id: 'ca_abcdefghijkl',
    });
    assert.deepEqual(presentedOf({ client: 'c', authorization: 'Bearer a.b.c' }), { kind: 'jwt', id: '?' });
    const claims = Buffer.from(JSON.stringify({ iss: 'https://issuer', sub: 'alice' })).toString('base64url');
    assert.deepEqual(presentedOf({ client: 'c', authorization: `Bearer h.${claims}.s` }), {
      kind: 'jwt',
      id: 'https://issuer alice',
    });
    assert.deepEqual(presentedOf({ client: 'c', apiKey: 'a.b.c' }), { kind: 'other' });
    assert.deepEqual(presentedOf({ client: 'c', authorization: 'Bearer a.b.c', apiKey: key }), {
      kind: 'key',
      id: 'ca_abcdefghijkl',
    });
    assert.deepEqual(presentedOf({ client: 'c', authorization: 'Basic dXNlcjpwYXNz' }), { kind: 'other' });
    assert.deepEqual(presentedOf({ client: 'c', authorization: 'Bearer the-server-token' }), { kind: 'other' });
  });
});
