/**
 * OIDC server settings: `--oidc-*` flags and CLEVERAGENTS_OIDC_* are checked before anything
 * starts (a bad value is one line with a hint, exit 2); the composition root discovers the
 * issuer, builds the JWT verifier (App.jwt) and declares device login on the Agent Card — and
 * starts anyway when the issuer does not answer, filling the card in once it does.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../src/main/app.ts';
import { oidcOptions } from '../../src/main/serve-oidc.ts';
import { StartupError } from '../../src/main/startup-errors.ts';
import type { ServeOptions } from '../../src/presentation/cli/index.ts';
import { AppError } from '../../src/domain/errors.ts';
import { spawn } from 'node:child_process';
import { collect } from '../support/cli.ts';
import { BIN, eventually, startHttpServer, startupErrorLine, tempDir } from '../support/harness.ts';
import { startFakeOidc, type FakeOidc } from '../support/fake-oidc.ts';
import { deviceLogin } from '../../src/presentation/cli/support/device-flow.ts';
import { JoseJwtVerifier } from '../../src/infrastructure/index.ts';

const base: ServeOptions = { stdio: false, host: '127.0.0.1', port: 0, verbose: false };

const startupError = (message: RegExp) => (err: unknown) => {
  assert.ok(err instanceof StartupError, `expected a StartupError, got ${String(err)}`);
  assert.match(err.message, message);
  assert.ok(err.hint);
  return true;
};

describe('oidcOptions (serve flags and environment)', () => {
  it('no issuer: no OIDC', () => {
    assert.equal(oidcOptions(base, {}), undefined);
  });

  it('flags, else the environment; flags win', () => {
    assert.deepEqual(
      oidcOptions(
        { ...base, oidcIssuer: 'https://login.example.com/realms/team', oidcRolesClaim: 'ca_roles' },
        {
          CLEVERAGENTS_OIDC_ISSUER: 'https://ignored.example.com',
          CLEVERAGENTS_OIDC_AUDIENCE: 'agents',
          CLEVERAGENTS_OIDC_CLIENT_ID: 'agents-cli',
          CLEVERAGENTS_OIDC_USER_CLAIM: 'email',
        },
      ),
      {
        issuer: 'https://login.example.com/realms/team',
        audience: 'agents',
        clientId: 'agents-cli',
        userClaim: 'email',
        rolesClaim: 'ca_roles',
        discoveryTimeoutMs: undefined,
        maxTokenLifetimeSec: undefined,
      },
    );
  });

  it('issue #35: the longest JWT lifetime comes from CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS (a minute to 30 days)', () => {
    const opts = { ...base, oidcIssuer: 'https://login.example.com', oidcAudience: 'agents' };
    assert.equal(
      oidcOptions(opts, { CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS: '3600' })?.maxTokenLifetimeSec,
      3600,
    );
    assert.throws(
      () => oidcOptions(opts, { CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS: '31536000' }),
      startupError(/CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS must be a whole number between 60 and 2592000/),
    );
  });

  it('an issuer without an audience is a start-up error', () => {
    assert.throws(
      () => oidcOptions({ ...base, oidcIssuer: 'https://login.example.com' }, {}),
      startupError(/without an audience/),
    );
  });

  it('settings without an issuer are a start-up error', () => {
    assert.throws(() => oidcOptions(base, { CLEVERAGENTS_OIDC_AUDIENCE: 'agents' }), startupError(/no OIDC issuer/));
  });

  it('the issuer must be an https URL (http on loopback only), without query or credentials', () => {
    const aud = { oidcAudience: 'agents' };
    assert.throws(() => oidcOptions({ ...base, ...aud, oidcIssuer: 'login' }, {}), startupError(/not an absolute URL/));
    assert.throws(
      () => oidcOptions({ ...base, ...aud, oidcIssuer: 'http://login.example.com' }, {}),
      startupError(/must use https/),
    );
    assert.throws(
      () => oidcOptions({ ...base, ...aud, oidcIssuer: 'https://u:p@login.example.com' }, {}),
      startupError(/credentials/),
    );
    assert.equal(
      oidcOptions({ ...base, ...aud, oidcIssuer: 'http://127.0.0.1:9999' }, {})?.issuer,
      'http://127.0.0.1:9999',
    );
  });

  it('a claim name with spaces is refused', () => {
    assert.throws(
      () => oidcOptions({ ...base, oidcIssuer: 'https://x.example', oidcAudience: 'a', oidcUserClaim: 'a b' }, {}),
      startupError(/--oidc-user-claim must be one word/),
    );
  });
});

describe('buildApp with OIDC', () => {
  let fake: FakeOidc;
  const apps: App[] = [];
  const dirs: string[] = [];
  before(async () => {
    fake = await startFakeOidc();
  });
  after(async () => {
    await Promise.all(apps.map((a) => a.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await fake.close();
  });
  const build = async (extra: { discoveryRetryMs?: number; maxTokenLifetimeSec?: number } = {}): Promise<App> => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const app = await buildApp({
      dataDir,
      inMemory: true,
      card: { endpoint: 'http://127.0.0.1:1/a2a', auth: 'bearer' },
      oidc: { issuer: fake.issuer, audience: fake.audience, clientId: 'agents-cli', rolesClaim: 'roles', ...extra },
    });
    apps.push(app);
    return app;
  };

  it('exposes the verifier (App.jwt) and declares the discovered device flow on the card', async () => {
    const app = await build();
    assert.ok(app.jwt);
    const v = await app.jwt.verify(await fake.issue({ sub: 's', preferred_username: 'Zoe', roles: ['team:admin'] }));
    assert.equal(v.username, 'zoe');
    assert.deepEqual(v.roles, { team: 'admin' });
    const card = app.card.publicCard('1.0').card as any;
    assert.deepEqual(card.securitySchemes.oauth2.oauth2SecurityScheme.flows.deviceCode.tokenUrl, fake.tokenEndpoint);
    assert.equal(
      card.securitySchemes.oauth2.oauth2SecurityScheme.flows.deviceCode.deviceAuthorizationUrl,
      fake.deviceAuthorizationEndpoint,
    );
    assert.deepEqual(card.capabilities.extensions[0].params.auth, { issuer: fake.issuer, oauthClientId: 'agents-cli' });
  });

  it('issue #35: the verifier requires exp and at most 24 h of lifetime, unless the server says otherwise', async () => {
    const app = await build();
    const token = await fake.issue({ sub: 's' });
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: unknown;
      iat?: unknown;
    };
    assert.equal(typeof claims.exp, 'number', "the fake issuer's tokens carry exp");
    assert.equal(typeof claims.iat, 'number');
    await assert.rejects(
      app.jwt!.verify(await fake.issue({ sub: 's' }, { expiresIn: null })),
      /^AuthenticationError: the token has no exp claim/,
    );
    const twoDays = await fake.issue({ sub: 'w' }, { expiresIn: 2 * 86_400 });
    await assert.rejects(app.jwt!.verify(twoDays), /too far ahead: it is valid for 2 d, more than the 24 h/);
    const lenient = await build({ maxTokenLifetimeSec: 7 * 86_400 });
    assert.equal((await lenient.jwt!.verify(twoDays)).subject, 'w');
  });

  it('without OIDC: no verifier, no oauth2 scheme', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const app = await buildApp({
      dataDir,
      inMemory: true,
      card: { endpoint: 'http://127.0.0.1:1/a2a', auth: 'bearer' },
    });
    apps.push(app);
    assert.equal(app.jwt, undefined);
    assert.equal((app.card.publicCard('1.0').card as any).securitySchemes.oauth2, undefined);
  });

  it('an issuer that is down at start: the server starts, JWTs are UNAVAILABLE, the card fills in once the issuer answers', async () => {
    fake.setDown(true);
    let app: App;
    try {
      app = await build({ discoveryRetryMs: 20 });
      const flows = (app.card.publicCard('1.0').card as any).securitySchemes.oauth2.oauth2SecurityScheme.flows;
      assert.deepEqual(flows, {}, 'no device endpoints yet');
      const token = await fake.issue({ sub: 'late' });
      await assert.rejects(app.jwt!.verify(token), (e: unknown) => e instanceof AppError && e.reason === 'UNAVAILABLE');
      fake.setDown(false);
      assert.equal((await app.jwt!.verify(token)).subject, 'late', 'the verifier retries discovery lazily');
    } finally {
      fake.setDown(false);
    }
    await eventually(
      async () =>
        (app.card.publicCard('1.0').card as any).securitySchemes.oauth2.oauth2SecurityScheme.flows.deviceCode ||
        undefined,
      5000,
      'the card to get the device flow',
    );
  });
});

describe('agents serve with OIDC', () => {
  let fake: FakeOidc;
  const dataDir = tempDir();
  before(async () => {
    fake = await startFakeOidc();
  });
  after(async () => {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('an issuer without an audience: exit 2, one error line and a hint, nothing started', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env['CLEVERAGENTS_OIDC_AUDIENCE'];
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--token',
        'oidc-test-token-0123456789',
        '--oidc-issuer',
        fake.issuer,
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const r = await collect(child, { timeoutMs: 20_000 });
    assert.equal(r.code, 2, r.stderr);
    const line = startupErrorLine(r.stderr);
    assert.match(line.msg, /without an audience/);
    assert.match(line.hint, /--oidc-audience/);
    assert.doesNotMatch(r.stderr, /listening on/);
  });

  it('serves the oauth2 scheme in v1.0 and v0.3 shapes', async (t) => {
    const server = await startHttpServer({
      dataDir,
      args: ['--oidc-issuer', fake.issuer, '--oidc-client-id', 'agents-cli'],
      env: { ...process.env, CLEVERAGENTS_OIDC_AUDIENCE: fake.audience },
    });
    t.after(() => server.stop());
    assert.match(server.stderr(), /accepting JWTs of http:\/\/127\.0\.0\.1:\d+ for audience cleveragents/);
    const v1 = (await (
      await fetch(`${server.baseUrl}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
    ).json()) as any;
    assert.equal(v1.securitySchemes.oauth2.oauth2SecurityScheme.flows.deviceCode.tokenUrl, fake.tokenEndpoint);
    assert.deepEqual(Object.keys(v1.securitySchemes), ['apiKey', 'bearer', 'oauth2']);
    const v03 = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as any;
    assert.equal(v03.securitySchemes.oauth2.type, 'oauth2');
    assert.equal(v03.securitySchemes.oauth2.oauth2MetadataUrl, `${fake.issuer}/.well-known/openid-configuration`);
    assert.deepEqual(v03.security, [{ apiKey: [] }, { bearer: [] }, { oauth2: ['openid'] }]);
    // The CLI's device login works from either served card, and yields a token the server's verifier accepts.
    const prev = process.env['CLEVERAGENTS_DEVICE_POLL_MS'];
    process.env['CLEVERAGENTS_DEVICE_POLL_MS'] = '2';
    t.after(() => {
      if (prev === undefined) delete process.env['CLEVERAGENTS_DEVICE_POLL_MS'];
      else process.env['CLEVERAGENTS_DEVICE_POLL_MS'] = prev;
    });
    const verifier = new JoseJwtVerifier({ issuer: fake.issuer, audience: fake.audience });
    for (const [i, card] of [v1, v03].entries()) {
      const ctl = new AbortController();
      t.after(() => ctl.abort());
      const login = deviceLogin({ card, print: () => {}, signal: ctl.signal });
      fake.approve(await fake.waitForGrant(i), { sub: `s${i}`, preferred_username: `user${i}` });
      const result = await login;
      assert.equal(result.clientId, 'agents-cli');
      assert.equal((await verifier.verify(result.accessToken)).username, `user${i}`);
    }
  });
});
