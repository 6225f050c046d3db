/** Users and API keys (AccountRepository) on every storage engine. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { AccountRepository, ApiKeyRecord, UserRecord } from '../../../../src/application/index.ts';
import { SqliteAccountRepository, type DB } from '../../../../src/infrastructure/index.ts';
import { PgAccountRepository } from '../../../../src/infrastructure/persistence/postgres/pg-account.repository.ts';
import type { PgDatabase } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';

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
/** Another instance's connection, inside a transaction that ran `statements` and is not committed yet. */
async function otherInstance(url: string, statements: string[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  for (const s of statements) await client.query(s);
  return {
    commit: () => client.query('commit'),
    end: () => client.end(),
  };
}

/** Waits (bounded) until a query of ours waits for a lock, or `work` settles first. */
async function untilBlocked(db: PgDatabase, work: Promise<unknown>): Promise<'blocked' | 'settled' | 'neither'> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 500 && !settled; i++) {
    const r = await sql<{ n: number }>`select count(*) as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db.kysely);
    if (Number(r.rows[0]?.n) > 0) return 'blocked';
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return settled ? 'settled' : 'neither';
}

const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

/** The repository of the opened engine, and its Kysely (namespaces are set up with plain rows). */
function accountsOf(opened: OpenedEngine): { repo: AccountRepository; kysely: Kysely<DB> } {
  if (opened.pg) return { repo: new PgAccountRepository(opened.pg), kysely: opened.pg.kysely };
  if (!opened.sqlite) throw new Error('no database');
  return { repo: new SqliteAccountRepository(opened.sqlite), kysely: opened.sqlite.kysely };
}

for (const engine of ENGINES) {
  describe(`account repository on ${engine.name}`, { skip: engine.skip() }, () => {
    let opened: OpenedEngine;
    let repo: AccountRepository;
    let kysely: Kysely<DB>;
    const ownerOf = async (ns: string) =>
      (await kysely.selectFrom('namespaces').select('owner').where('name', '=', ns).executeTakeFirst())?.owner;
    const addNamespace = (name: string, owner: string) =>
      kysely.insertInto('namespaces').values({ name, owner, created_at: AT }).execute();
    const addMember = (namespace: string, principal: string, role: string) =>
      kysely.insertInto('namespace_members').values({ namespace, principal, role, added_at: AT }).execute();

    beforeEach(async () => {
      opened = await engine.open();
      ({ repo, kysely } = accountsOf(opened));
    });
    afterEach(() => opened.close());

    it('makes the user with their own namespace and owner membership, in one go', async () => {
      await repo.createUser(user('alice', { displayName: 'Alice' }));
      assert.deepEqual(await repo.getUser('alice'), user('alice', { displayName: 'Alice' }));
      assert.equal(await ownerOf('alice'), 'alice');
      assert.deepEqual(await repo.rolesOf('alice'), { alice: 'owner' });
      assert.equal(await repo.countUsers(), 1);
      await repo.createUser(user('bob', { admin: true }));
      assert.deepEqual(
        (await repo.listUsers()).map((u) => [u.name, u.admin]),
        [
          ['alice', false],
          ['bob', true],
        ],
      );
    });

    it('refuses a taken name, a taken identity, and a default namespace that belongs to someone else, changing nothing', async () => {
      await repo.createUser(user('alice', { externalId: 'https://idp|1' }));
      await assert.rejects(repo.createUser(user('alice')), reason('ALREADY_EXISTS'));
      await assert.rejects(
        repo.createUser(user('alias', { externalId: 'https://idp|1' })),
        (err: Error) => reason('ALREADY_EXISTS')(err) && /already belongs to user alice/.test(err.message),
      );
      await addNamespace('team', 'alice');
      await assert.rejects(repo.createUser(user('team')), (err: Error) => /belongs to someone else/.test(err.message));
      assert.equal(await repo.getUser('team'), undefined, 'no user was made');
      assert.equal(await repo.getUser('alias'), undefined, 'no user was made');
      assert.equal(await repo.countUsers(), 1);
    });

    it('joinExisting: the bootstrap admin becomes an owner of the existing local/', async () => {
      await repo.createUser(user('admin', { admin: true, defaultNamespace: 'local' }), { joinExisting: true });
      assert.equal(await ownerOf('local'), 'local', 'the namespace is unchanged');
      assert.deepEqual(await repo.rolesOf('admin'), { local: 'owner' });
    });

    it('looks a key up with its user and roles; unknown ids are undefined', async () => {
      await repo.createUser(user('alice', { externalId: 'https://idp|42' }));
      await addMember('local', 'alice', 'viewer');
      await repo.createKey(key('ca_aaaaaaaaaaaa', 'alice', { expiresAt: '2030-01-01T00:00:00.000Z' }));
      const found = await repo.lookupKey('ca_aaaaaaaaaaaa');
      assert.deepEqual(found?.key, key('ca_aaaaaaaaaaaa', 'alice', { expiresAt: '2030-01-01T00:00:00.000Z' }));
      assert.equal(found?.user.name, 'alice');
      assert.equal(found?.user.externalId, 'https://idp|42');
      assert.deepEqual(found?.roles, { alice: 'owner', local: 'viewer' });
      assert.equal(await repo.lookupKey('ca_bbbbbbbbbbbb'), undefined);
      assert.equal((await repo.userByExternalId('https://idp|42'))?.name, 'alice');
      assert.equal(await repo.userByExternalId('https://idp|43'), undefined);
    });

    it('looks up the key of a user without any membership: no roles, the key and user intact', async () => {
      await repo.createUser(user('alice'));
      await repo.createKey(key('ca_aaaaaaaaaaaa', 'alice'));
      await kysely.deleteFrom('namespace_members').where('principal', '=', 'alice').execute();
      const found = await repo.lookupKey('ca_aaaaaaaaaaaa');
      assert.deepEqual(found, { key: key('ca_aaaaaaaaaaaa', 'alice'), user: user('alice'), roles: {} });
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
      assert.equal(await repo.getKey('st_0000000000000001'), undefined);
    });

    it('creating a user another instance is creating meanwhile: refused as if it came second', async (t) => {
      if (!opened.pg) return t.skip('SQLite has one writer at a time');
      // The other instance has inserted carol and not committed yet: our checks cannot see her.
      const other = await otherInstance(opened.location, [
        `insert into users (name, admin, default_namespace, created_at) values ('carol', 0, 'carol', '${AT}')`,
      ]);
      try {
        const ours = repo.createUser(user('carol'));
        assert.equal(await untilBlocked(opened.pg, ours), 'blocked', 'our insert waits for the other transaction');
        await other.commit();
        await assert.rejects(ours, reason('ALREADY_EXISTS'));
      } finally {
        await other.end();
      }
      assert.equal(await repo.countUsers(), 1);
      assert.deepEqual(await repo.rolesOf('carol'), {}, 'the winner made no membership; the loser none either');
    });

    it('replaceKey while another instance replaces the same key leaves one key of that name', async (t) => {
      if (!opened.pg) return t.skip('SQLite has one writer at a time');
      await repo.createUser(user('alice'));
      // The other instance is in the middle of its replaceKey: user row locked, its key inserted.
      const other = await otherInstance(opened.location, [
        `select name from users where name = 'alice' for update`,
        `insert into api_keys (id, user_name, name, hash, created_at) values ('st_1', 'alice', 'server-token', 'h', '${AT}')`,
      ]);
      try {
        const ours = repo.replaceKey(key('st_2', 'alice', { name: 'server-token' }));
        assert.equal(await untilBlocked(opened.pg, ours), 'blocked', 'ours waits for the other replacement');
        await other.commit();
        await ours;
      } finally {
        await other.end();
      }
      assert.deepEqual(
        (await repo.listKeys('alice')).map((k) => k.id),
        ['st_2'],
      );
    });

    it('lists keys by user, then creation', async () => {
      await repo.createUser(user('alice'));
      await repo.createUser(user('bob'));
      await repo.createKey(key('ca_b', 'bob'));
      await repo.createKey(key('ca_a2', 'alice', { createdAt: '2026-03-02T00:00:00.000Z' }));
      await repo.createKey(key('ca_a1', 'alice'));
      assert.deepEqual(
        (await repo.listKeys()).map((k) => k.id),
        ['ca_a1', 'ca_a2', 'ca_b'],
      );
      assert.deepEqual(
        (await repo.listKeys('bob')).map((k) => k.id),
        ['ca_b'],
      );
    });
  });
}
