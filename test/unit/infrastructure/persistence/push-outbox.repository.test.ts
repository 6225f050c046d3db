/** The push outbox (migration 0006) on both engines: the same PushOutbox contract. */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PushOutbox } from '../../../../src/application/index.ts';
import { SqlitePushOutboxRepository } from '../../../../src/infrastructure/index.ts';
import { PgPushOutboxRepository } from '../../../../src/infrastructure/persistence/postgres/pg-push-outbox.repository.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';
import { taskRow } from '../../../support/task-rows.ts';

const at = '2026-03-01T10:00:00.000Z';

/** A task row (entries reference their task), written directly: the task repository is not under test here. */
async function seedTask(e: OpenedEngine, id: string): Promise<void> {
  const row = taskRow(id, at);
  if (e.pg) await e.pg.kysely.insertInto('tasks').values(row).execute();
  else
    e.sqlite?.sqlite
      .prepare(
        `insert into tasks (${Object.keys(row).join(',')}) values (${Object.keys(row)
          .map((k) => '@' + k)
          .join(',')})`,
      )
      .run(row);
}

async function deleteTask(e: OpenedEngine, id: string): Promise<void> {
  if (e.pg) await e.pg.kysely.deleteFrom('tasks').where('id', '=', id).execute();
  else e.sqlite?.sqlite.prepare('delete from tasks where id = ?').run(id);
}

for (const engine of ENGINES) {
  describe(`push outbox on ${engine.name}`, { skip: engine.skip() }, () => {
    let e: OpenedEngine;
    const outbox = (runnerId: string): PushOutbox =>
      e.pg ? new PgPushOutboxRepository(e.pg, runnerId) : new SqlitePushOutboxRepository(e.sqlite!, runnerId);
    beforeEach(async () => {
      e = await engine.open();
      await seedTask(e, 't1');
    });
    afterEach(() => e.close());

    it('keeps entries in seq order per config, records failed attempts and hands a dead runner’s entries over', async () => {
      const old = outbox('old');
      await old.enqueue([{ taskId: 't1', configId: 'a', seq: 2, payload: '{"n":2}' }], at);
      await old.enqueue(
        [
          { taskId: 't1', configId: 'a', seq: 1, payload: '{"n":1}' },
          { taskId: 't1', configId: 'b', seq: 1, payload: '{"n":1}' },
        ],
        at,
      );
      const target = { taskId: 't1', configId: 'a' };
      assert.equal((await old.next(target))?.seq, 1);
      await old.retryLater(target, 1, 1, '2026-03-01T10:00:05.000Z', 'HTTP 500');
      assert.deepEqual(await old.next(target), {
        taskId: 't1',
        configId: 'a',
        seq: 1,
        payload: '{"n":1}',
        attempts: 1,
        nextAttemptAt: '2026-03-01T10:00:05.000Z',
        lastError: 'HTTP 500',
      });
      // Queued again (the same event): the entry and its attempts stay as they were.
      await old.enqueue([{ taskId: 't1', configId: 'a', seq: 1, payload: '{"n":1}' }], at);
      assert.equal((await old.next(target))?.attempts, 1);

      const fresh = outbox('new');
      assert.deepEqual(await fresh.claim(async (id) => id === 'old', at), [], 'a live runner keeps its entries');
      const claimed = await fresh.claim(async () => false, '2026-03-01T11:00:00.000Z');
      assert.equal(
        (await fresh.next(target))?.nextAttemptAt,
        '2026-03-01T11:00:00.000Z',
        'taken over entries are due at once',
      );
      assert.deepEqual(claimed.map((t) => t.configId).sort(), ['a', 'b']);
      await fresh.remove(target, 1);
      assert.equal((await fresh.next(target))?.seq, 2);
      await fresh.removeTarget({ taskId: 't1', configId: 'b' });
      assert.equal(await fresh.next({ taskId: 't1', configId: 'b' }), undefined);
      await deleteTask(e, 't1');
      assert.equal(await fresh.next(target), undefined, 'entries go with their task');
    });

    it('queues several entries all or none, and two runners claiming one dead runner’s entries split nothing twice', async () => {
      const old = outbox('old');
      // The second entry names a task that does not exist: neither is stored.
      await assert.rejects(
        old.enqueue(
          [
            { taskId: 't1', configId: 'a', seq: 1, payload: '{}' },
            { taskId: 'missing', configId: 'a', seq: 1, payload: '{}' },
          ],
          at,
        ),
      );
      assert.equal(await old.next({ taskId: 't1', configId: 'a' }), undefined);
      await old.enqueue(
        [
          { taskId: 't1', configId: 'a', seq: 1, payload: '{}' },
          { taskId: 't1', configId: 'b', seq: 1, payload: '{}' },
        ],
        at,
      );
      // Two live instances take over the dead runner's entries at once.
      const x = outbox('x');
      const y = outbox('y');
      const live = async (id: string | null): Promise<boolean> => id === 'x' || id === 'y';
      const [cx, cy] = await Promise.all([x.claim(live, at), y.claim(live, at)]);
      const all = [...cx, ...cy].map((t) => t.configId).sort();
      assert.deepEqual(all, ['a', 'b'], 'each target went to exactly one claimer');
    });
  });
}
