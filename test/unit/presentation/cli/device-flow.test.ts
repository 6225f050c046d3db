import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deviceLogin, refreshAccessToken } from '../../../../src/presentation/cli/support/device-flow.ts';
import { CliError } from '../../../../src/presentation/cli/exit-codes.ts';
import { JoseJwtVerifier } from '../../../../src/infrastructure/index.ts';
import { startFakeOidc, type FakeOidc } from '../../../support/fake-oidc.ts';

const CLIENT = 'agents-cli';

/** A v1.0 card's oauth2 scheme with the deviceCode flow, and the extension naming the client id. */
function v1Card(fake: FakeOidc, clientId: string | null = CLIENT): Record<string, unknown> {
  return {
    securitySchemes: {
      oauth2: {
        oauth2SecurityScheme: {
          flows: {
            deviceCode: {
              deviceAuthorizationUrl: fake.deviceAuthorizationEndpoint,
              tokenUrl: fake.tokenEndpoint,
              scopes: { openid: 'OpenID', offline_access: 'refresh' },
            },
          },
          oauth2MetadataUrl: `${fake.issuer}/.well-known/openid-configuration`,
        },
      },
    },
    capabilities: {
      extensions: [
        {
          uri: 'urn:cleveragents:extensions:v1',
          params: clientId ? { auth: { oauthClientId: clientId, issuer: fake.issuer } } : {},
        },
      ],
    },
  };
}

/** Waits (bounded) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), 'the condition never held');
}

const authFailure =
  (message: RegExp, reason = 'AUTH') =>
  (err: unknown): boolean => {
    assert.ok(err instanceof CliError, `expected a CliError, got ${String(err)}`);
    assert.equal(err.reason, reason);
    assert.match(err.message, message);
    assert.ok(err.hint, 'a hint');
    return true;
  };

describe('deviceLogin against a fake issuer', () => {
  let fake: FakeOidc;
  let grants = 0;
  /** Every login a test started is aborted after it: none polls on into the next test. */
  const logins: AbortController[] = [];
  afterEach(() => {
    for (const c of logins.splice(0)) c.abort();
  });
  const prevPoll = process.env['CLEVERAGENTS_DEVICE_POLL_MS'];
  before(async () => {
    process.env['CLEVERAGENTS_DEVICE_POLL_MS'] = '2';
    fake = await startFakeOidc({ clientIds: [CLIENT, 'other'] });
  });
  after(async () => {
    if (prevPoll === undefined) delete process.env['CLEVERAGENTS_DEVICE_POLL_MS'];
    else process.env['CLEVERAGENTS_DEVICE_POLL_MS'] = prevPoll;
    await fake.close();
  });

  const start = (card: Record<string, unknown>, extra: { clientId?: string; scope?: string } = {}) => {
    const lines: string[] = [];
    const ctl = new AbortController();
    logins.push(ctl);
    const login = deviceLogin({ card, print: (l) => lines.push(l), signal: ctl.signal, ...extra });
    login.catch(() => {});
    return { login, lines, ctl, code: fake.waitForGrant(grants++) };
  };

  it('approve: prints where to go and the code, polls while pending, returns tokens the verifier accepts', async () => {
    const { login, lines, code } = start(v1Card(fake));
    const userCode = await code;
    await until(() => lines.length >= 3);
    assert.ok(
      lines.some((l) => l.includes(`${fake.issuer}/activate`) && l.includes(userCode)),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => l.includes(`user_code=${userCode}`)),
      'verification_uri_complete printed',
    );
    // Still pending: the CLI keeps polling (authorization_pending) until the user approves.
    await until(() => fake.polls(userCode) >= 2);
    fake.approve(userCode, { sub: 'u1', preferred_username: 'dana' });
    const result = await login;
    assert.equal(result.tokenUrl, fake.tokenEndpoint);
    assert.equal(result.clientId, CLIENT);
    assert.ok(result.refreshToken);
    assert.ok(result.expiresAt && result.expiresAt > Date.now() / 1000);
    const verified = await new JoseJwtVerifier({ issuer: fake.issuer, audience: fake.audience }).verify(
      result.accessToken,
    );
    assert.equal(verified.username, 'dana');
    assert.equal(fake.deviceRequests.at(-1)?.['scope'], 'openid offline_access', 'the card-declared scopes');
    const device = fake.tokenRequests.filter((f) => f['grant_type'] === 'urn:ietf:params:oauth:grant-type:device_code');
    assert.ok(device.every((f) => f['client_id'] === CLIENT));
  });

  it('sends the card-declared scopes, or the given scope and client id', async () => {
    const { login, code } = start(v1Card(fake), { clientId: 'other', scope: 'openid profile' });
    const userCode = await code;
    fake.approve(userCode, { sub: 'u2' });
    const result = await login;
    assert.equal(result.clientId, 'other');
    assert.equal(fake.deviceRequests.at(-1)?.['scope'], 'openid profile');
    assert.equal(fake.tokenRequests.at(-1)?.['client_id'], 'other');
  });

  it('deny: a clear access-denied error', async () => {
    const { login, code } = start(v1Card(fake));
    fake.deny(await code);
    await assert.rejects(login, authFailure(/denied/));
  });

  it('expiry: the device code expired', async () => {
    const { login, code } = start(v1Card(fake));
    fake.expire(await code);
    await assert.rejects(login, authFailure(/expired before the login was approved/));
  });

  it('slow_down: the interval grows by 5 s and polling goes on', async () => {
    const { login, lines, code } = start(v1Card(fake));
    const userCode = await code;
    fake.slowDown(userCode, 1);
    await until(() => fake.polls(userCode) >= 1);
    fake.approve(userCode, { sub: 'u3' });
    await login;
    assert.ok(lines.includes('The issuer asked to poll more slowly: every 6 s'), lines.join('\n'));
  });

  it('a v0.3 card (oauth2MetadataUrl, no deviceCode flow) is followed through discovery', async () => {
    const card = {
      securitySchemes: {
        oauth2: { type: 'oauth2', flows: {}, oauth2MetadataUrl: `${fake.issuer}/.well-known/openid-configuration` },
      },
      capabilities: { extensions: [{ params: { auth: { oauthClientId: CLIENT, issuer: fake.issuer } } }] },
    };
    const { login, code } = start(card);
    fake.approve(await code, { sub: 'u4' });
    assert.equal((await login).tokenUrl, fake.tokenEndpoint);
  });

  it('aborting ends the login as interrupted', async () => {
    const { login, ctl, code } = start(v1Card(fake));
    await code;
    ctl.abort();
    await assert.rejects(login, authFailure(/cancelled/, 'INTERRUPTED'));
  });

  it('an unknown client id is refused by the issuer with a hint about --client-id', async () => {
    const ctl = new AbortController();
    await assert.rejects(
      deviceLogin({ card: v1Card(fake), clientId: 'nobody', print: () => {}, signal: ctl.signal }),
      (err: unknown) => authFailure(/invalid_client/)(err) && /client-id/.test((err as CliError).hint ?? ''),
    );
  });

  it('a card without a device flow, or without a client id, is a clear error', async () => {
    const ctl = new AbortController();
    await assert.rejects(
      deviceLogin({ card: { securitySchemes: { bearer: {} } }, print: () => {}, signal: ctl.signal }),
      authFailure(/does not offer device login/, 'INVALID_STATE'),
    );
    await assert.rejects(
      deviceLogin({ card: v1Card(fake, null), print: () => {}, signal: ctl.signal }),
      authFailure(/no OAuth client id/, 'USAGE'),
    );
  });

  it('refuses a non-loopback http endpoint', async () => {
    const ctl = new AbortController();
    const card = v1Card(fake);
    const flow = (card['securitySchemes'] as any).oauth2.oauth2SecurityScheme.flows.deviceCode;
    flow.deviceAuthorizationUrl = 'http://issuer.example/device';
    await assert.rejects(
      deviceLogin({ card, print: () => {}, signal: ctl.signal }),
      authFailure(/does not use https/, 'UNREACHABLE'),
    );
  });

  it('refreshAccessToken: a new access token; a used refresh token is refused as an expired login', async () => {
    const { login, code } = start(v1Card(fake));
    fake.approve(await code, { sub: 'u5', preferred_username: 'erin' });
    const first = await login;
    const refreshed = await refreshAccessToken({
      tokenUrl: first.tokenUrl,
      clientId: first.clientId,
      refreshToken: first.refreshToken as string,
    });
    assert.ok(refreshed.accessToken && refreshed.accessToken !== first.accessToken);
    assert.ok(refreshed.refreshToken);
    await assert.rejects(
      refreshAccessToken({
        tokenUrl: first.tokenUrl,
        clientId: first.clientId,
        refreshToken: first.refreshToken as string,
      }),
      authFailure(/login has expired/),
    );
  });

  it('an unreachable token endpoint is UNREACHABLE, not a crash', async () => {
    await assert.rejects(
      refreshAccessToken({ tokenUrl: 'http://127.0.0.1:1/token', clientId: CLIENT, refreshToken: 'x' }),
      authFailure(/cannot be reached/, 'UNREACHABLE'),
    );
  });
});
