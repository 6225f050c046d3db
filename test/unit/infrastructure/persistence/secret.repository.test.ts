/** The secret repository on both engines, as the port documents it; a namespace's purge takes its secrets. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { NamespaceRepository, SecretStore, StoredSecret } from '../../../../src/application/index.ts';
import { SqliteNamespaceRepository, SqliteSecretRepository } from '../../../../src/infrastructure/index.ts';
import { PgNamespaceRepository } from '../../../../src/infrastructure/persistence/postgres/pg-registry.repository.ts';
import { PgSecretRepository } from '../../../../src/infrastructure/persistence/postgres/pg-secret.repository.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';
import { kyselyOf } from '../../../support/rows.ts';

const AT = '2026-03-01T10:00:00.000Z';
const LATER = '2026-03-02T10:00:00.000Z';

const secret = (namespace: string, name: string, extra: Partial<StoredSecret> = {}): StoredSecret => ({
  namespace,
  name,
  ciphertext: `v1:iv:tag:${namespace}-${name}`,
  createdBy: 'alice',
  createdAt: AT,
  updatedAt: AT,
  ...extra,
});

for (const engine of ENGINES)
  describe(`secret repository on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let repo: SecretStore;
    let ns: NamespaceRepository;

    beforeEach(async () => {
      db = await engine.open();
      repo = db.pg ? new PgSecretRepository(db.pg) : new SqliteSecretRepository(db.sqlite!);
      ns = db.pg ? new PgNamespaceRepository(db.pg) : new SqliteNamespaceRepository(db.sqlite!);
      for (const name of ['team', 'other']) assert.equal(await ns.create(name, 'alice', AT), true);
    });
    afterEach(() => db.close());

    it('stores a secret whole and returns it by namespace and name', async () => {
      const s = secret('team', 'openai');
      assert.deepEqual(await repo.put(s), { created: true, createdAt: AT, createdBy: 'alice' });
      assert.deepEqual(await repo.get('team', 'openai'), s);
      assert.equal(await repo.get('other', 'openai'), undefined);
      assert.equal(await repo.get('team', 'OpenAI'), undefined, 'names are case-sensitive');
    });

    it('a second put replaces the ciphertext, keeping its creator and creation time', async () => {
      await repo.put(secret('team', 'k'));
      const w = await repo.put(
        secret('team', 'k', { ciphertext: 'v1:new', createdBy: 'bob', createdAt: LATER, updatedAt: LATER }),
      );
      assert.deepEqual(w, { created: false, createdAt: AT, createdBy: 'alice' });
      assert.deepEqual(await repo.get('team', 'k'), secret('team', 'k', { ciphertext: 'v1:new', updatedAt: LATER }));
    });

    it('lists a namespace’s secrets by name (no ciphertext), counts them, and removes one', async () => {
      for (const n of ['b', 'a', 'B']) await repo.put(secret('team', n));
      await repo.put(secret('other', 'z'));
      const listed = await repo.list('team');
      assert.deepEqual(
        listed.map((s) => s.name),
        ['B', 'a', 'b'],
      );
      assert.deepEqual(listed[0], { name: 'B', createdBy: 'alice', createdAt: AT, updatedAt: AT });
      assert.equal(await repo.count('team'), 3);
      assert.equal(await repo.count('nowhere'), 0);
      assert.deepEqual(await repo.list('nowhere'), []);
      assert.equal(await repo.remove('team', 'a'), true);
      assert.equal(await repo.remove('team', 'a'), false);
      assert.equal(await repo.remove('team', 'z'), false, 'another namespace’s secret is not removed');
      assert.deepEqual(
        (await repo.list('team')).map((s) => s.name),
        ['B', 'b'],
      );
      assert.ok(await repo.get('other', 'z'));
    });

    it('a secret of a namespace that does not exist is refused as the namespace not found', async () => {
      await assert.rejects(repo.put(secret('nowhere', 'k')), (err: Error & { reason?: string }) => {
        assert.equal(err.reason, 'NOT_FOUND');
        assert.equal(err.message, 'Namespace nowhere was not found');
        return true;
      });
      assert.equal(await repo.get('nowhere', 'k'), undefined);
    });

    it('purging a namespace removes its secrets (the foreign key cascades), and no other namespace’s', async () => {
      await repo.put(secret('team', 'a'));
      await repo.put(secret('team', 'b'));
      await repo.put(secret('other', 'a'));
      await ns.purge('team');
      assert.equal(await repo.count('team'), 0);
      assert.equal(await repo.get('team', 'a'), undefined);
      assert.ok(await repo.get('other', 'a'));
      // Not left behind in the table either (a namespace made again later starts empty).
      const rows = await kyselyOf(db).selectFrom('namespace_secrets').select(['namespace', 'name']).execute();
      assert.deepEqual(rows, [{ namespace: 'other', name: 'a' }]);
      assert.equal(await ns.create('team', 'bob', LATER), true);
      assert.deepEqual(await repo.list('team'), []);
    });
  });
