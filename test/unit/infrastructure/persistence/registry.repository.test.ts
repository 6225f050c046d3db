/** The registry and namespace repositories on both engines, as the ports document them. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { NamespaceRepository, RegistryRepository } from '../../../../src/application/index.ts';
import type { Reference, RegistryEntity, RegistryKind } from '../../../../src/domain/registry/entities.ts';
import { SqliteNamespaceRepository, SqliteRegistryRepository } from '../../../../src/infrastructure/index.ts';
import {
  PgNamespaceRepository,
  PgRegistryRepository,
} from '../../../../src/infrastructure/persistence/postgres/pg-registry.repository.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';
import { insertPlanRow, insertTaskRow, kyselyOf } from '../../../support/rows.ts';

const AT = '2026-03-01T10:00:00.000Z';
const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

function entity(kind: RegistryKind, name: string, extra: Partial<RegistryEntity> = {}): RegistryEntity {
  return {
    kind,
    name,
    namespace: name.split('/')[0] ?? name,
    revision: 1,
    contentHash: `hash-${name}`,
    createdAt: AT,
    updatedAt: AT,
    builtin: false,
    definition: { name, description: `the ${kind} ${name}` },
    ...extra,
  };
}
const ref = (kind: RegistryKind, name: string): Reference => ({ kind, name, path: ['tools', 0] });

for (const engine of ENGINES)
  describe(`registry and namespace repositories on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let repo: RegistryRepository;
    let ns: NamespaceRepository;

    beforeEach(async () => {
      db = await engine.open();
      repo = db.pg ? new PgRegistryRepository(db.pg) : new SqliteRegistryRepository(db.sqlite!);
      ns = db.pg ? new PgNamespaceRepository(db.pg) : new SqliteNamespaceRepository(db.sqlite!);
      for (const name of ['team', 'other']) assert.equal(await ns.create(name, 'alice', AT), true);
    });
    afterEach(() => db.close());

    it('stores an entity whole and returns it by kind and name', async () => {
      const e = entity('tool', 'team/fmt');
      await repo.insert(e, [], 'command');
      assert.deepEqual(await repo.get('tool', 'team/fmt'), e);
      assert.equal(await repo.get('skill', 'team/fmt'), undefined);
      assert.equal(await repo.get('tool', 'team/none'), undefined);
    });

    it('refuses a second entity of the same kind and name (ALREADY_EXISTS), leaving the first', async () => {
      await repo.insert(entity('tool', 'team/fmt'), [], null);
      await assert.rejects(repo.insert(entity('tool', 'team/fmt', { contentHash: 'other' }), [], null), (err) => {
        assert.ok(reason('ALREADY_EXISTS')(err));
        assert.deepEqual((err as { details?: unknown }).details, { entity: 'tool', name: 'team/fmt' });
        return true;
      });
      assert.equal((await repo.get('tool', 'team/fmt'))?.contentHash, 'hash-team/fmt');
      // The same name under another kind is another entity.
      await repo.insert(entity('skill', 'team/fmt'), [], null);
    });

    it('lists by kind and namespaces, ordered by name, filtered by the type field', async () => {
      await repo.insert(entity('tool', 'team/b'), [], 'command');
      await repo.insert(entity('tool', 'team/a'), [], 'builtin');
      await repo.insert(entity('tool', 'other/c'), [], 'command');
      await repo.insert(entity('skill', 'team/s'), [], null);
      const names = async (q: Parameters<RegistryRepository['list']>[0]) => (await repo.list(q)).map((e) => e.name);
      assert.deepEqual(await names({ kind: 'tool', namespaces: ['team'] }), ['team/a', 'team/b']);
      assert.deepEqual(await names({ kind: 'tool', namespaces: ['team', 'other'] }), ['other/c', 'team/a', 'team/b']);
      assert.deepEqual(await names({ kind: 'tool', namespaces: ['team', 'other'], type: 'command' }), [
        'other/c',
        'team/b',
      ]);
      assert.deepEqual(await names({ kind: 'tool', namespaces: [] }), []);
      assert.deepEqual(await repo.countByNamespace('team'), { tool: 2, skill: 1 });
      assert.deepEqual(await repo.countByNamespace('nobody'), {});
    });

    it('replaces only at the expected revision, with the new content hash and references', async () => {
      await repo.insert(entity('tool', 'team/t'), [], null);
      await repo.insert(entity('skill', 'team/s'), [ref('tool', 'team/t')], null);
      const next = entity('skill', 'team/s', { revision: 2, contentHash: 'h2', updatedAt: '2026-03-02T00:00:00.000Z' });
      assert.equal(await repo.replace(next, 1, [ref('actor', 'team/a')], null), true);
      assert.deepEqual(await repo.get('skill', 'team/s'), next);
      assert.deepEqual(await repo.referrers('tool', 'team/t'), []);
      assert.deepEqual(await repo.referrers('actor', 'team/a'), [{ kind: 'skill', name: 'team/s' }]);
      // A stale revision changes nothing.
      assert.equal(await repo.replace({ ...next, revision: 3, contentHash: 'h3' }, 1, [], null), false);
      assert.deepEqual(await repo.get('skill', 'team/s'), next);
      assert.equal(await repo.replace(entity('skill', 'team/none'), 1, [], null), false);
    });

    it('of concurrent replaces from one revision exactly one wins', async () => {
      await repo.insert(entity('tool', 'team/t'), [], null);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          repo.replace(entity('tool', 'team/t', { revision: 2, contentHash: `h${i}` }), 1, [], null),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal((await repo.get('tool', 'team/t'))?.revision, 2);
    });

    it('reports referrers (once each, in order) and a delete takes the entity’s own references', async () => {
      await repo.insert(entity('tool', 'team/t'), [], null);
      await repo.insert(entity('skill', 'team/s'), [ref('tool', 'team/t'), ref('tool', 'team/t')], null);
      await repo.insert(entity('actor', 'team/a'), [ref('tool', 'team/t'), ref('skill', 'team/s')], null);
      assert.deepEqual(await repo.referrers('tool', 'team/t'), [
        { kind: 'actor', name: 'team/a' },
        { kind: 'skill', name: 'team/s' },
      ]);
      assert.equal(await repo.delete('actor', 'team/a'), true);
      assert.equal(await repo.delete('actor', 'team/a'), false);
      assert.deepEqual(await repo.referrers('tool', 'team/t'), [{ kind: 'skill', name: 'team/s' }]);
      assert.deepEqual(await repo.referrers('skill', 'team/s'), []);
    });

    it('creates a namespace once, with its owner as first member', async () => {
      assert.equal(await ns.create('team', 'bob', AT), false);
      assert.deepEqual(await ns.get('team'), { name: 'team', owner: 'alice', createdAt: AT });
      assert.equal(await ns.get('none'), undefined);
      assert.deepEqual(await ns.members('team'), [{ principal: 'alice', role: 'owner', addedAt: AT }]);
      const created = await Promise.all([ns.create('race', 'a', AT), ns.create('race', 'b', AT)]);
      assert.deepEqual(created.filter(Boolean).length, 1);
      assert.equal((await ns.members('race')).length, 1);
    });

    it('adds members, changes their role, removes them, and lists a principal’s namespaces', async () => {
      await ns.setMember('team', 'bob', 'viewer', '2026-03-02T00:00:00.000Z');
      await ns.setMember('team', 'bob', 'admin', '2026-03-03T00:00:00.000Z');
      await ns.setMember('other', 'bob', 'member', AT);
      assert.equal(await ns.roleOf('team', 'bob'), 'admin');
      assert.equal(await ns.roleOf('team', 'carol'), undefined);
      assert.deepEqual(await ns.members('team'), [
        { principal: 'alice', role: 'owner', addedAt: AT },
        // A role change keeps when the member was added.
        { principal: 'bob', role: 'admin', addedAt: '2026-03-02T00:00:00.000Z' },
      ]);
      assert.deepEqual(
        (await ns.forPrincipal('bob')).map((n) => `${n.name}:${n.role}`),
        ['other:member', 'team:admin'],
      );
      assert.equal(await ns.removeMember('team', 'bob'), true);
      assert.equal(await ns.removeMember('team', 'bob'), false);
      assert.deepEqual(
        (await ns.forPrincipal('bob')).map((n) => n.name),
        ['other'],
      );
    });

    it('names the users whose default namespace it is', async () => {
      const k = kyselyOf(db);
      for (const name of ['zed', 'amy'])
        await k
          .insertInto('users')
          .values({
            name,
            display_name: null,
            admin: 0,
            default_namespace: 'team',
            external_id: null,
            created_at: AT,
            disabled_at: null,
          })
          .execute();
      assert.deepEqual(await ns.defaultFor('team'), ['amy', 'zed']);
      assert.deepEqual(await ns.defaultFor('other'), []);
    });

    it('purges a namespace with everything in it, and nothing of another', async () => {
      await repo.insert(entity('tool', 'team/t'), [], null);
      await repo.insert(entity('skill', 'team/s'), [ref('tool', 'other/t')], null);
      await repo.insert(entity('tool', 'other/t'), [], null);
      await repo.insert(entity('skill', 'other/s'), [ref('tool', 'team/t')], null);
      await ns.setMember('team', 'bob', 'member', AT);
      const k = kyselyOf(db);
      for (const [id, owner] of [
        ['s1', 'team'],
        ['s2', 'other'],
      ] as const)
        await k
          .insertInto('sessions')
          .values({
            id,
            owner,
            actor: 'a',
            title: null,
            created_at: AT,
            updated_at: AT,
            task_count: 0,
            project: null,
            skills: null,
          })
          .execute();
      await insertTaskRow(db, 't1', 's1', 'team');
      await insertTaskRow(db, 't2', 's1', 'team');
      await insertTaskRow(db, 't3', 's2', 'other');
      await insertPlanRow(db, 'p1', {}, 'team');
      const expected = { entities: 2, sessions: 1, tasks: 2, plans: 1 };
      assert.deepEqual(await ns.contents('team'), expected);
      assert.deepEqual(await ns.purge('team'), expected);
      assert.equal(await ns.get('team'), undefined);
      assert.deepEqual(await ns.members('team'), []);
      assert.deepEqual(await ns.contents('team'), { entities: 0, sessions: 0, tasks: 0, plans: 0 });
      assert.deepEqual(await ns.contents('other'), { entities: 2, sessions: 1, tasks: 1, plans: 0 });
      // The purged entities' own references went; another namespace's reference to them stays (dangling).
      assert.deepEqual(await repo.referrers('tool', 'other/t'), []);
      assert.deepEqual(await repo.referrers('tool', 'team/t'), [{ kind: 'skill', name: 'other/s' }]);
      const left = await k.selectFrom('task_counts').select('owner').where('owner', '=', 'team').execute();
      assert.deepEqual(left, []);
      assert.deepEqual(await ns.purge('none'), { entities: 0, sessions: 0, tasks: 0, plans: 0 });
    });
  });
