import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { resolveConnection } from '../../../../src/presentation/cli/config.ts';
import {
  credentialsPath,
  expiryMs,
  loadCredentials,
  refreshIfExpired,
  saveCredentials,
  type CredentialStore,
} from '../../../../src/presentation/cli/credential-store.ts';

describe('the credential store', () => {
  const root = mkdtempSync(join(tmpdir(), 'ca-creds-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('lives next to config.yaml; written 0600 in a 0700 directory; read back', () => {
    const path = credentialsPath({ XDG_CONFIG_HOME: root });
    assert.equal(path, join(root, 'cleveragents', 'credentials.json'));
    assert.deepEqual(loadCredentials(path), { servers: {} }, 'missing: empty');
    const store: CredentialStore = {
      current: 'http://a',
      servers: { 'http://a': { kind: 'key', token: 'ca_x', user: 'alice' } },
    };
    saveCredentials(path, store);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(root, 'cleveragents')).mode & 0o777, 0o700);
    assert.deepEqual(loadCredentials(path), store);
    writeFileSync(path, '{nope');
    assert.throws(() => loadCredentials(path), /not valid JSON/);
  });

  it('the connection: flag > env > config > the current login; the token stored for the URL last', () => {
    const logins = { current: 'http://current', servers: { 'http://current': { token: 'stored-key' } } };
    const c = resolveConnection({}, {}, {}, logins);
    assert.deepEqual(c, { kind: 'server', url: 'http://current', token: 'stored-key', stored: 'http://current' });
    assert.deepEqual(resolveConnection({ local: true }, {}, {}, logins), { kind: 'local', verbose: false });
    assert.deepEqual(resolveConnection({ server: 'http://other' }, {}, {}, logins), {
      kind: 'server',
      url: 'http://other',
    });
    assert.deepEqual(resolveConnection({}, { CLEVERAGENTS_SERVER_TOKEN: 'env' }, {}, logins), {
      kind: 'server',
      url: 'http://current',
      token: 'env',
    });
    assert.equal(resolveConnection({}, {}, { server: 'http://cfg' }, logins).kind, 'server');
    assert.deepEqual(resolveConnection({}, {}, {}), { kind: 'local', verbose: false });
  });

  it('a token that cannot be a bearer header (a pasted JSON answer, a key with its newline) is refused naming where it came from', () => {
    const server = { server: 'http://s' };
    assert.throws(
      () => resolveConnection(server, { CLEVERAGENTS_SERVER_TOKEN: "{\n  key: 'ca_x'\n}" }, {}),
      /the server token from CLEVERAGENTS_SERVER_TOKEN is not a valid bearer token: it holds a space or a line break/,
    );
    assert.throws(() => resolveConnection({ ...server, token: 'ca_é' }, {}, {}), /from --token .*printable ASCII/);
    assert.equal(resolveConnection(server, { CLEVERAGENTS_SERVER_TOKEN: 'ca_ok_123' }, {}).kind, 'server');
  });

  it('oauth: an unexpired token is used as stored; an expired one without a refresh token asks to log in again', async () => {
    const path = join(root, 'o.json');
    const now = 1_000_000_000_000;
    const store: CredentialStore = {
      servers: {
        'http://fresh': { kind: 'oauth', token: 'fresh', expiresAt: now + 3_600_000, user: 'u' },
        'http://stale': { kind: 'oauth', token: 'stale', expiresAt: now - 1, user: 'u' },
      },
    };
    assert.equal(await refreshIfExpired(path, store, 'http://fresh', () => now), 'fresh');
    await assert.rejects(
      refreshIfExpired(path, store, 'http://stale', () => now),
      /has expired/,
    );
    assert.equal(expiryMs(1_700_000_000), 1_700_000_000_000, 'seconds are read as seconds');
    assert.equal(expiryMs(1_700_000_000_000), 1_700_000_000_000);
    assert.throws(() => readFileSync(path), /ENOENT/, 'nothing written');
  });
});
