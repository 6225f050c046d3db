/** The push outbox in SQLite (migration 0006); message keys: task.repository.test.ts; runner leases: runner.registry.test.ts. */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '../../../../src/domain/a2a.model.js';
import {
  openDatabase,
  SqlitePushOutboxRepository,
  SqliteTaskRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.js';

const task = (id: string, contextId = 'c1'): Task => ({
  id,
  contextId,
  status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-03-01T10:00:00.000Z' },
});

describe('durable work in SQLite', () => {
  let db: SqliteDatabase;
  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
  });
  afterEach(() => db.close());

  it('keeps outbox entries in seq order per config, records failed attempts and hands a dead runner’s entries over', async () => {
    const tasks = new SqliteTaskRepository(db, { runnerId: 'old' });
    await tasks.create(task('t1'), 'alice');
    const old = new SqlitePushOutboxRepository(db, 'old');
    const at = '2026-03-01T10:00:00.000Z';
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

    const fresh = new SqlitePushOutboxRepository(db, 'new');
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
    await tasks.deleteByContext('c1');
    assert.equal(await fresh.next(target), undefined, 'entries go with their task');
  });
});
