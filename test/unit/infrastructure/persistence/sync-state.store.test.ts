/** The sync_state table on both engines: what a local store and a server agreed on per entity. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { SyncStateStore } from '../../../../src/application/index.ts';
import { SqliteSyncStateStore } from '../../../../src/infrastructure/index.ts';
import { PgSyncStateStore } from '../../../../src/infrastructure/persistence/postgres/pg-sync-state.store.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';

const base = {
  kind: 'tool' as const,
  name: 'team/a',
  revision: 1,
  contentHash: 'h1',
  localHash: 'l1',
  syncedAt: 't1',
};

for (const engine of ENGINES)
  describe(`sync state store on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let s: SyncStateStore;

    beforeEach(async () => {
      db = await engine.open();
      s = db.pg ? new PgSyncStateStore(db.pg) : new SqliteSyncStateStore(db.sqlite!);
    });
    afterEach(() => db.close());

    it('keeps one base per remote, kind and name (a later put replaces it)', async () => {
      await s.put('http://a', base);
      await s.put('http://a', { ...base, revision: 2, contentHash: 'h2', localHash: 'l2', syncedAt: 't2' });
      await s.put('http://b', base);
      assert.deepEqual(await s.list('http://a'), [
        { ...base, revision: 2, contentHash: 'h2', localHash: 'l2', syncedAt: 't2' },
      ]);
      assert.equal(await s.clear('http://b'), 1);
      assert.deepEqual(await s.list('http://b'), []);
      assert.equal(await s.clear('http://b'), 0);
    });

    it('lists a remote’s bases by kind, then name', async () => {
      await s.put('http://a', { ...base, kind: 'tool', name: 'team/b' });
      await s.put('http://a', { ...base, kind: 'actor', name: 'team/z' });
      await s.put('http://a', { ...base, kind: 'tool', name: 'team/B' });
      assert.deepEqual(
        (await s.list('http://a')).map((b) => `${b.kind} ${b.name}`),
        ['actor team/z', 'tool team/B', 'tool team/b'],
      );
    });
  });
