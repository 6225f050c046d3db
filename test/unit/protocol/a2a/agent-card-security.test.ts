import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCard } from '@a2a-js/sdk';
import { AgentCardProvider, type AgentCardOptions, type CardOidc } from '../../../../src/protocol/a2a/agent-card.ts';
import { METHODS } from '../../../../src/protocol/a2a/method-table.ts';

const ISSUER = 'https://login.example.com/realms/team';
const OIDC: CardOidc = {
  issuer: ISSUER,
  clientId: 'agents-cli',
  metadataUrl: `${ISSUER}/.well-known/openid-configuration`,
  deviceAuthorizationUrl: `${ISSUER}/device`,
  tokenUrl: `${ISSUER}/token`,
};

const provider = (extra: Partial<AgentCardOptions>): AgentCardProvider =>
  new AgentCardProvider(
    {
      name: 'CleverAgents',
      description: 'test',
      version: '9.9.9',
      endpoint: 'https://agents.example.com/a2a',
      auth: 'bearer',
      pushNotifications: true,
      ...extra,
    },
    METHODS,
  );

const extParams = (card: Record<string, unknown>): Record<string, unknown> =>
  ((card['capabilities'] as any).extensions[0] as { params: Record<string, unknown> }).params;

describe('the Agent Card declares exactly the configured security schemes', () => {
  it('local mode: none', () => {
    const card = provider({ auth: 'none' }).publicCard('1.0').card;
    assert.equal(card['securitySchemes'], undefined);
    assert.equal(card['securityRequirements'], undefined);
    assert.equal(provider({ auth: 'none', oidc: OIDC }).publicCard().card['security'], undefined);
    assert.equal(extParams(provider({ auth: 'none', oidc: OIDC }).publicCard('1.0').card)['auth'], undefined);
  });

  it('server mode without OIDC: apiKey (X-API-Key header) and bearer, as alternatives; no auth params', () => {
    const card = provider({}).publicCard('1.0').card;
    assert.deepEqual(Object.keys(card['securitySchemes'] as object), ['apiKey', 'bearer']);
    assert.deepEqual((card['securitySchemes'] as any).apiKey.apiKeySecurityScheme, {
      description: 'An API key of this server (or its server token) in the X-API-Key header.',
      location: 'header',
      name: 'X-API-Key',
    });
    assert.equal((card['securitySchemes'] as any).bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.deepEqual(card['securityRequirements'], [
      { schemes: { apiKey: { list: [] } } },
      { schemes: { bearer: { list: [] } } },
    ]);
    assert.equal(extParams(card)['auth'], undefined);
  });

  it('server mode with OIDC: also oauth2 with the device code flow and the metadata URL; the extension names issuer and client id', () => {
    const card = provider({ oidc: OIDC }).publicCard('1.0').card;
    assert.deepEqual(Object.keys(card['securitySchemes'] as object), ['apiKey', 'bearer', 'oauth2']);
    const oauth = (card['securitySchemes'] as any).oauth2.oauth2SecurityScheme;
    assert.equal(oauth.oauth2MetadataUrl, OIDC.metadataUrl);
    assert.equal(oauth.flows.deviceCode.deviceAuthorizationUrl, OIDC.deviceAuthorizationUrl);
    assert.equal(oauth.flows.deviceCode.tokenUrl, OIDC.tokenUrl);
    assert.ok('openid' in oauth.flows.deviceCode.scopes);
    assert.deepEqual((card['securityRequirements'] as unknown[]).at(-1), { schemes: { oauth2: { list: ['openid'] } } });
    assert.deepEqual(extParams(card)['auth'], { issuer: ISSUER, oauthClientId: 'agents-cli' });
    // The official v1.0 SDK reads every scheme (the oneof cases and the device code flow).
    const parsed = AgentCard.fromJSON(card);
    assert.equal(parsed.securitySchemes['apiKey']?.scheme?.$case, 'apiKeySecurityScheme');
    assert.equal(parsed.securitySchemes['bearer']?.scheme?.$case, 'httpAuthSecurityScheme');
    const o = parsed.securitySchemes['oauth2']?.scheme;
    assert.equal(o?.$case, 'oauth2SecurityScheme');
    assert.ok(o?.$case === 'oauth2SecurityScheme');
    assert.equal(o.value.flows?.flow?.$case, 'deviceCode');
    assert.ok(o.value.flows?.flow?.$case === 'deviceCode');
    assert.equal(o.value.flows.flow.value.tokenUrl, OIDC.tokenUrl);
    assert.equal(o.value.oauth2MetadataUrl, OIDC.metadataUrl);
    assert.equal(parsed.securityRequirements.length, 3);
  });

  it('before discovery: oauth2 names only the metadata URL; setOidc adds the device flow (the cached card is renewed)', () => {
    const p = provider({ oidc: { issuer: ISSUER, metadataUrl: OIDC.metadataUrl } });
    const before = p.publicCard('1.0');
    assert.deepEqual((before.card['securitySchemes'] as any).oauth2.oauth2SecurityScheme.flows, {});
    assert.deepEqual(extParams(before.card)['auth'], { issuer: ISSUER });
    p.setOidc(OIDC);
    const after = p.publicCard('1.0');
    assert.notEqual(after.etag, before.etag);
    assert.ok((after.card['securitySchemes'] as any).oauth2.oauth2SecurityScheme.flows.deviceCode);
  });

  it('the v0.3 card: OpenAPI-shaped apiKey, http bearer and oauth2 (metadata URL) schemes, and `security`', () => {
    const card = provider({ oidc: OIDC }).publicCard().card;
    assert.deepEqual((card['securitySchemes'] as any).apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'An API key of this server (or its server token) in the X-API-Key header.',
    });
    assert.equal((card['securitySchemes'] as any).bearer.type, 'http');
    assert.equal((card['securitySchemes'] as any).bearer.scheme, 'bearer');
    assert.deepEqual((card['securitySchemes'] as any).oauth2, {
      type: 'oauth2',
      description: 'Log in at the OpenID Connect issuer with the device code flow (agents login --device).',
      flows: {},
      oauth2MetadataUrl: OIDC.metadataUrl,
    });
    assert.deepEqual(card['security'], [{ apiKey: [] }, { bearer: [] }, { oauth2: ['openid'] }]);
    const plain = provider({}).publicCard().card;
    assert.deepEqual(plain['security'], [{ apiKey: [] }, { bearer: [] }]);
    assert.deepEqual(Object.keys(plain['securitySchemes'] as object), ['apiKey', 'bearer']);
  });
});
