import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ApiKeyRecord, UserRecord } from '../../../../src/application/index.js';
import {
  openDatabase,
  SqliteAccountRepository,
  SqliteNamespaceRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.js';

const AT = '2026-03-01T10:00:00.000Z';
const user = (name: string, extra: Partial<UserRecord> = {}): UserRecord => ({
  name,
  admin: false,
  defaultNamespace: name,
  createdAt: AT,
  ...extra,
});
const key = (id: string, userName: string, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  user: userName,
  name: 'k',
  hash: 'scrypt$x',
  createdAt: AT,
  ...extra,
});
const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

describe('SqliteAccountRepository', () => {
  let db: SqliteDatabase;
  let repo: SqliteAccountRepository;
  let namespaces: SqliteNamespaceRepository;

  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
    repo = new SqliteAccountRepository(db);
    namespaces = new SqliteNamespaceRepository(db);
  });
  afterEach(() => db.close());

  it('makes the user with their own namespace and owner membership, in one go', async () => {
    await repo.createUser(user('alice', { displayName: 'Alice' }));
    assert.deepEqual(await repo.getUser('alice'), user('alice', { displayName: 'Alice' }));
    assert.equal((await namespaces.get('alice'))?.owner, 'alice');
    assert.deepEqual(await repo.rolesOf('alice'), { alice: 'owner' });
    assert.equal(await repo.countUsers(), 1);
  });

  it('refuses a taken name, and a default namespace that belongs to someone else, changing nothing', async () => {
    await repo.createUser(user('alice'));
    await assert.rejects(repo.createUser(user('alice')), reason('ALREADY_EXISTS'));
    await namespaces.create('team', 'alice', AT);
    await assert.rejects(repo.createUser(user('team')), (err: Error) => /belongs to someone else/.test(err.message));
    assert.equal(await repo.getUser('team'), undefined, 'no user was made');
    assert.equal(await repo.countUsers(), 1);
  });

  it('joinExisting: the bootstrap admin becomes an owner of the existing local/', async () => {
    await repo.createUser(user('admin', { admin: true, defaultNamespace: 'local' }), { joinExisting: true });
    assert.equal((await namespaces.get('local'))?.owner, 'local', 'the namespace is unchanged');
    assert.deepEqual(await repo.rolesOf('admin'), { local: 'owner' });
  });

  it('looks a key up with its user and roles; unknown ids are undefined', async () => {
    await repo.createUser(user('alice', { externalId: 'https://idp|42' }));
    await namespaces.setMember('local', 'alice', 'viewer', AT);
    await repo.createKey(key('ca_aaaaaaaaaaaa', 'alice', { expiresAt: '2030-01-01T00:00:00.000Z' }));
    const found = await repo.lookupKey('ca_aaaaaaaaaaaa');
    assert.deepEqual(found?.key, key('ca_aaaaaaaaaaaa', 'alice', { expiresAt: '2030-01-01T00:00:00.000Z' }));
    assert.equal(found?.user.name, 'alice');
    assert.equal(found?.user.externalId, 'https://idp|42');
    assert.deepEqual(found?.roles, { alice: 'owner', local: 'viewer' });
    assert.equal(await repo.lookupKey('ca_bbbbbbbbbbbb'), undefined);
    assert.equal((await repo.userByExternalId('https://idp|42'))?.name, 'alice');
  });

  it('revokes, touches, disables; replaceKey swaps the named key', async () => {
    await repo.createUser(user('alice'));
    await repo.createKey(key('ca_aaaaaaaaaaaa', 'alice'));
    await repo.revokeKey('ca_aaaaaaaaaaaa', '2026-03-02T00:00:00.000Z');
    await repo.revokeKey('ca_aaaaaaaaaaaa', '2026-03-03T00:00:00.000Z');
    assert.equal(
      (await repo.getKey('ca_aaaaaaaaaaaa'))?.revokedAt,
      '2026-03-02T00:00:00.000Z',
      'the first revocation stays',
    );
    await repo.touchKey('ca_aaaaaaaaaaaa', '2026-03-04T00:00:00.000Z');
    assert.equal((await repo.getKey('ca_aaaaaaaaaaaa'))?.lastUsedAt, '2026-03-04T00:00:00.000Z');
    await repo.setDisabled('alice', AT);
    assert.equal((await repo.getUser('alice'))?.disabledAt, AT);
    await repo.setDisabled('alice', undefined);
    assert.equal((await repo.getUser('alice'))?.disabledAt, undefined);
    await repo.replaceKey(key('st_0000000000000001', 'alice', { name: 'server-token' }));
    await repo.replaceKey(key('st_0000000000000002', 'alice', { name: 'server-token' }));
    assert.deepEqual(
      (await repo.listKeys('alice')).map((k) => k.id),
      ['ca_aaaaaaaaaaaa', 'st_0000000000000002'],
    );
  });
});
