import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PushConfigRepository, StoredPushConfig } from '../../../../src/application/index.ts';
import { openDatabase, SqlitePushConfigRepository } from '../../../../src/infrastructure/index.ts';
import { openPgDatabase } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';
import { PgPushConfigRepository } from '../../../../src/infrastructure/persistence/postgres/pg-push-config.repository.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';
import { eventually } from '../../../support/eventually.ts';
import { insertTaskRow, kyselyOf } from '../../../support/rows.ts';

const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

/** Another process on the same data: its own connection, its own repository. */
async function otherProcess(opened: OpenedEngine): Promise<{ repo: PushConfigRepository; close(): Promise<void> }> {
  if (opened.sqlite) {
    const db = await openDatabase({ file: opened.location });
    return { repo: new SqlitePushConfigRepository(db), close: () => db.close() };
  }
  const db = await openPgDatabase({ url: opened.location });
  return { repo: new PgPushConfigRepository(db), close: () => db.close() };
}

/**
 * What `repo` tells of changes: `changed()` answers whether one came since the last call (by its
 * version, read at once; or by its notifications, awaited) and which tasks' they were, if it says.
 */
async function changesOf(repo: PushConfigRepository) {
  if (repo.version) {
    const version = repo.version.bind(repo);
    let seen = version();
    return {
      stop: async () => {},
      changed: async (): Promise<string[]> => {
        const now = version();
        const moved = now !== seen;
        seen = now;
        return moved ? ['?'] : [];
      },
    };
  }
  assert.ok(repo.watch, 'the repository tells of changes one way or the other');
  const tasks: string[] = [];
  const stop = await repo.watch((taskId) => tasks.push(taskId));
  return {
    stop,
    changed: () => eventually(async () => (tasks.length > 0 ? tasks.splice(0) : undefined), 5000, 'a notification'),
  };
}

for (const engine of ENGINES)
  describe(`push config repository on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let repo: PushConfigRepository;

    beforeEach(async () => {
      db = await engine.open();
      repo = db.pg ? new PgPushConfigRepository(db.pg) : new SqlitePushConfigRepository(db.sqlite!);
      for (const id of ['t1', 't2']) await insertTaskRow(db, id);
    });
    afterEach(() => db.close());

    const secret: StoredPushConfig = {
      id: 'p1',
      taskId: 't1',
      url: 'https://hooks.example.com/a2a',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 's3cret' },
    };

    it('stores a config whole, credentials included, and returns it by task and id', async () => {
      await repo.put(secret);
      assert.deepEqual(await repo.get('t1', 'p1'), secret);
      assert.equal(await repo.get('t2', 'p1'), undefined);
      assert.equal(await repo.get('t1', 'p2'), undefined);
    });

    it('replaces a config put again under the same id', async () => {
      await repo.put(secret);
      await repo.put({ id: 'p1', taskId: 't1', url: 'https://other.example.com/' });
      assert.deepEqual(await repo.list('t1'), [{ id: 'p1', taskId: 't1', url: 'https://other.example.com/' }]);
    });

    it('lists a task’s configs only', async () => {
      await repo.put({ id: 'b', taskId: 't1', url: 'https://b.example.com/' });
      await repo.put({ id: 'a', taskId: 't1', url: 'https://a.example.com/' });
      await repo.put({ id: 'a', taskId: 't2', url: 'https://x.example.com/' });
      assert.deepEqual(
        (await repo.list('t1')).map((c) => c.url),
        ['https://a.example.com/', 'https://b.example.com/'],
      );
      assert.deepEqual(await repo.list('t9'), []);
    });

    it('deletes one config, then all of a task', async () => {
      await repo.put(secret);
      await repo.put({ id: 'p2', taskId: 't1', url: 'https://b.example.com/' });
      await repo.put({ id: 'p3', taskId: 't2', url: 'https://c.example.com/' });
      assert.equal(await repo.delete('t1', 'p1'), true);
      assert.equal(await repo.delete('t1', 'p1'), false);
      assert.deepEqual(
        (await repo.list('t1')).map((c) => c.id),
        ['p2'],
      );
      await repo.deleteByTask('t1');
      assert.deepEqual(await repo.list('t1'), []);
      assert.equal((await repo.list('t2')).length, 1);
    });

    it('refuses a config for a task that does not exist', async () => {
      await assert.rejects(repo.put({ ...secret, taskId: 'nope' }), reason('TASK_NOT_FOUND'));
    });

    it('tells this process of each change another process makes, at once', async () => {
      const other = await otherProcess(db);
      const changes = await changesOf(repo);
      try {
        const expect = async (what: string) => {
          const tasks = await changes.changed();
          assert.ok(tasks.length > 0, `${what} was noticed`);
          if (!tasks.includes('?')) assert.deepEqual([...new Set(tasks)], ['t1'], `${what}: the task is named`);
        };
        if (repo.version) assert.deepEqual(await changes.changed(), [], 'nothing moved it yet');
        await other.repo.put(secret);
        await expect('a put');
        await other.repo.delete('t1', 'p1');
        await expect('a delete');
        await other.repo.put(secret);
        await expect('a second put');
        await other.repo.deleteByTask('t1');
        await expect('a delete of the task’s configs');
        await repo.list('t1');
        if (repo.version) assert.deepEqual(await changes.changed(), [], 'a read does not move it');
      } finally {
        await changes.stop();
        await other.close();
      }
    });

    it('a task’s configs go with the task', async () => {
      await repo.put(secret);
      await kyselyOf(db).deleteFrom('tasks').where('id', '=', 't1').execute();
      assert.deepEqual(await repo.list('t1'), []);
    });
  });
