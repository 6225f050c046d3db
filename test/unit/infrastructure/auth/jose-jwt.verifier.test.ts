import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  discoverOidc,
  JoseJwtVerifier,
  normaliseUsername,
  rolesFromClaim,
  tokenIdOf,
} from '../../../../src/infrastructure/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { startFakeOidc, type FakeOidc } from '../../../support/fake-oidc.ts';

const refusedWith =
  (reason: string, message: RegExp) =>
  (err: unknown): boolean => {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.reason, reason);
    assert.match(err.message, message);
    assert.ok(err.hint, 'a hint');
    return true;
  };

describe('JoseJwtVerifier against a fake issuer', () => {
  let fake: FakeOidc;
  let verifier: JoseJwtVerifier;
  before(async () => {
    fake = await startFakeOidc();
    verifier = new JoseJwtVerifier({
      issuer: fake.issuer,
      audience: fake.audience,
      jwksUri: fake.jwksUri,
      rolesClaim: 'cleveragents_roles',
      cooldownMs: 0,
    });
  });
  after(() => fake.close());

  it('verifies a valid token: user from preferred_username, roles, expiry, token id', async () => {
    const token = await fake.issue({
      sub: 'abc-123',
      preferred_username: 'Alice.Smith',
      cleveragents_roles: { team: 'admin', 'Bad NS': 'owner', other: 'emperor' },
    });
    const v = await verifier.verify(token);
    assert.equal(v.issuer, fake.issuer);
    assert.equal(v.subject, 'abc-123');
    assert.equal(v.username, 'alice-smith');
    assert.deepEqual(v.roles, { team: 'admin' });
    assert.equal(typeof v.expiresAt, 'number');
    assert.equal(v.tokenId, tokenIdOf(token));
    assert.match(v.tokenId, /^[0-9a-f]{16}$/);
  });

  it('falls back to sub when the user claim is absent, and reads roles as a list', async () => {
    const token = await fake.issue({ sub: '42Bob', cleveragents_roles: ['team:member', 'x', 'ops:viewer', 'a:b:c'] });
    const v = await verifier.verify(token);
    assert.equal(v.username, 'u-42bob');
    assert.deepEqual(v.roles, { team: 'member', ops: 'viewer' });
  });

  it('a configured user claim is used', async () => {
    const byEmail = new JoseJwtVerifier({
      issuer: fake.issuer,
      audience: fake.audience,
      jwksUri: fake.jwksUri,
      userClaim: 'email',
    });
    const v = await byEmail.verify(await fake.issue({ sub: 's1', email: 'carol@example.com' }));
    assert.equal(v.username, 'carol-example-com');
    assert.equal(v.roles, undefined);
  });

  it('refuses an expired token', async () => {
    const token = await fake.issue({ sub: 's' }, { expiresIn: -3600 });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /has expired/));
  });

  it('refuses a token without exp (issue #35: a JWT must expire), saying which claim is missing', async () => {
    const token = await fake.issue({ sub: 's', preferred_username: 'eve' }, { expiresIn: null });
    await assert.rejects(
      verifier.verify(token),
      refusedWith('UNAUTHENTICATED', /^the token has no exp claim \(this server accepts only tokens that expire\)$/),
    );
  });

  it('refuses a token valid for longer than 24 h (exp - iat), saying how long and the limit', async () => {
    const token = await fake.issue({ sub: 's' }, { expiresIn: 30 * 86_400 });
    await assert.rejects(
      verifier.verify(token),
      refusedWith(
        'UNAUTHENTICATED',
        /^the token's exp claim is too far ahead: it is valid for 30 d, more than the 24 h this server accepts$/,
      ),
    );
  });

  it('without iat the lifetime runs from now: an exp three days ahead is refused', async () => {
    const token = await fake.issue({ sub: 's' }, { expiresIn: 3 * 86_400, issuedAt: null });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /valid for 3 d, more than the 24 h/));
  });

  it('an iat in the future does not stretch the limit: the lifetime runs from now', async () => {
    const token = await fake.issue({ sub: 's' }, { expiresIn: 86_400 + 7200, issuedAt: 7200 });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /too far ahead: it is valid for 26 h/));
  });

  it('accepts a token of 23 h; the limit is configurable (maxLifetimeSec)', async () => {
    const day = await fake.issue({ sub: 'long' }, { expiresIn: 23 * 3600, issuedAt: -60 });
    assert.equal((await verifier.verify(day)).subject, 'long');
    const strict = new JoseJwtVerifier({
      issuer: fake.issuer,
      audience: fake.audience,
      jwksUri: fake.jwksUri,
      maxLifetimeSec: 600,
    });
    await assert.rejects(
      strict.verify(await fake.issue({ sub: 's' })),
      refusedWith('UNAUTHENTICATED', /valid for 1 h, more than the 10 min this server accepts/),
    );
    assert.equal((await strict.verify(await fake.issue({ sub: 'short' }, { expiresIn: 300 }))).subject, 'short');
  });

  it('refuses a token that is not yet valid', async () => {
    const token = await fake.issue({ sub: 's' }, { notBefore: 3600, expiresIn: 7200 });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /not yet valid/));
  });

  it('refuses a token for another audience', async () => {
    const token = await fake.issue({ sub: 's' }, { audience: 'someone-else' });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /for another audience/));
  });

  it('refuses a token of another issuer', async () => {
    const token = await fake.issue({ sub: 's' }, { issuer: 'https://evil.example' });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /another issuer/));
  });

  it('refuses a tampered token (bad signature)', async () => {
    const token = await fake.issue({ sub: 'mallory', preferred_username: 'mallory' });
    const [h, , s] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({
        sub: 'root',
        preferred_username: 'root',
        iss: fake.issuer,
        aud: fake.audience,
        exp: Math.floor(Date.now() / 1000) + 600,
      }),
    ).toString('base64url');
    await assert.rejects(verifier.verify(`${h}.${forged}.${s}`), refusedWith('UNAUTHENTICATED', /bad signature/));
  });

  it('refuses malformed tokens', async () => {
    await assert.rejects(verifier.verify('not-a-jwt'), refusedWith('UNAUTHENTICATED', /malformed/));
    await assert.rejects(verifier.verify('a.b.c'), refusedWith('UNAUTHENTICATED', /malformed/));
  });

  it('refuses a token without a subject', async () => {
    const token = await fake.issue({ preferred_username: 'nobody' });
    await assert.rejects(verifier.verify(token), refusedWith('UNAUTHENTICATED', /no subject/));
  });

  it('follows key rotation: a token of the new key verifies (the JWKS is fetched again)', async () => {
    const old = await fake.issue({ sub: 'r1' });
    await verifier.verify(old);
    const fetches = fake.jwksFetches();
    await fake.rotate({ keepOld: true });
    const fresh = await fake.issue({ sub: 'r2' });
    assert.equal((await verifier.verify(fresh)).subject, 'r2');
    assert.equal(fake.jwksFetches(), fetches + 1, 'an unknown kid refetched the JWKS once');
    assert.equal((await verifier.verify(old)).subject, 'r1', 'the kept old key still verifies');
  });

  it('after a rotation without keepOld, tokens of the old key are refused as signed with an unknown key', async () => {
    const oldKid = fake.kid();
    const old = await fake.issue({ sub: 'o1' });
    await verifier.verify(old);
    await fake.rotate();
    assert.notEqual(fake.kid(), oldKid);
    assert.equal((await verifier.verify(await fake.issue({ sub: 'n1' }))).subject, 'n1');
    await assert.rejects(verifier.verify(old), refusedWith('UNAUTHENTICATED', /unknown key/));
  });
});

describe('JoseJwtVerifier when the issuer is unreachable', () => {
  it('an unreachable JWKS is UNAVAILABLE with a hint, never a crash; it recovers when the JWKS is back', async (t) => {
    const fake = await startFakeOidc();
    t.after(() => fake.close());
    const verifier = new JoseJwtVerifier({
      issuer: fake.issuer,
      audience: fake.audience,
      jwksUri: fake.jwksUri,
      cooldownMs: 0,
    });
    const token = await fake.issue({ sub: 's' });
    fake.setDown(true);
    await assert.rejects(verifier.verify(token), refusedWith('UNAVAILABLE', /signing keys cannot be fetched/));
    fake.setDown(false);
    assert.equal((await verifier.verify(token)).subject, 's');
  });

  it('a closed port is UNAVAILABLE', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const fake = await startFakeOidc();
    const token = await fake.issue({ sub: 's' });
    await fake.close();
    const verifier = new JoseJwtVerifier({
      issuer: fake.issuer,
      audience: fake.audience,
      jwksUri: `http://127.0.0.1:${port}/jwks`,
      fetchTimeoutMs: 2000,
    });
    await assert.rejects(verifier.verify(token), refusedWith('UNAVAILABLE', /cannot be fetched/));
  });

  it('without a jwksUri, discovery is read on first use and retried after a failure', async (t) => {
    const fake = await startFakeOidc();
    t.after(() => fake.close());
    const verifier = new JoseJwtVerifier({ issuer: fake.issuer, audience: fake.audience });
    const token = await fake.issue({ sub: 'lazy' });
    fake.setDown(true);
    await assert.rejects(verifier.verify(token), refusedWith('UNAVAILABLE', /discovery document/));
    fake.setDown(false);
    assert.equal((await verifier.verify(token)).subject, 'lazy');
  });
});

describe('discoverOidc', () => {
  it('reads jwks_uri, the device authorization and token endpoints', async (t) => {
    const fake = await startFakeOidc();
    t.after(() => fake.close());
    const d = await discoverOidc(fake.issuer);
    assert.deepEqual(d, {
      issuer: fake.issuer,
      jwksUri: fake.jwksUri,
      deviceAuthorizationEndpoint: fake.deviceAuthorizationEndpoint,
      tokenEndpoint: fake.tokenEndpoint,
      metadataUrl: `${fake.issuer}/.well-known/openid-configuration`,
    });
  });

  it('an unreachable issuer is UNAVAILABLE with a hint', async (t) => {
    const fake = await startFakeOidc();
    t.after(() => fake.close());
    fake.setDown(true);
    await assert.rejects(discoverOidc(fake.issuer), refusedWith('UNAVAILABLE', /HTTP 503/));
  });
});

describe('claim mapping', () => {
  it('normalises user names to a namespace segment', () => {
    assert.equal(normaliseUsername('Alice'), 'alice');
    assert.equal(normaliseUsername('bob@example.com'), 'bob-example-com');
    assert.equal(normaliseUsername('9lives'), 'u-9lives');
    assert.equal(normaliseUsername('_x'), 'u-_x');
    assert.equal(normaliseUsername('a'.repeat(100)).length, 63);
    assert.match(normaliseUsername('Ünïcode Name'), /^[a-z][a-z0-9_-]{0,62}$/);
  });

  it("reads roles from a map or a list, ignoring invalid entries (which namespaces a claim may name is the accounts service's decision)", () => {
    assert.deepEqual(rolesFromClaim({ team: 'owner', builtin: 'owner', Team2: 'admin', ops: 'god', x: 1 }), {
      team: 'owner',
      builtin: 'owner',
    });
    assert.deepEqual(rolesFromClaim(['team:viewer', 'nocolon', 7, 'ops:member']), { team: 'viewer', ops: 'member' });
    assert.equal(rolesFromClaim('team:owner'), undefined);
    assert.equal(rolesFromClaim(undefined), undefined);
  });
});
