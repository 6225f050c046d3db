/** Runner leases and the push outbox in SQLite (migrations 0005 and 0006); message keys: task.repository.test.ts. */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '../../../../src/domain/a2a.model.js';
import { silentLogger } from '../../../../src/application/index.js';
import {
  openDatabase,
  SqlitePushOutboxRepository,
  SqliteRunnerRegistry,
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

  it('tells a live runner from one whose process is gone or whose lease expired', async () => {
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const clock = () => now;
    const me = new SqliteRunnerRegistry(db, { id: 'me', logger: silentLogger, leaseMs: 10_000, now: clock });
    const other = new SqliteRunnerRegistry(db, {
      id: 'other',
      logger: silentLogger,
      leaseMs: 10_000,
      now: clock,
      pid: process.ppid,
    });
    const dead = new SqliteRunnerRegistry(db, {
      id: 'dead',
      logger: silentLogger,
      leaseMs: 10_000,
      now: clock,
      pid: 2 ** 22 + 12345,
    });
    const remote = new SqliteRunnerRegistry(db, {
      id: 'remote',
      logger: silentLogger,
      leaseMs: 10_000,
      now: clock,
      host: 'elsewhere',
    });
    for (const r of [me, other, dead, remote]) await r.start();
    try {
      assert.equal(await me.isLive('me'), true);
      assert.equal(await me.isLive('other'), true, 'another live process on this host');
      assert.equal(await me.isLive('dead'), false, 'its pid no longer exists');
      assert.equal(await me.isLive('remote'), true, 'another host: the lease decides');
      assert.equal(await me.isLive('never-registered'), false);
      assert.equal(await me.isLive(null), false);
      now += 20_000;
      assert.equal(await me.isLive('remote'), false, 'an expired lease');
      assert.equal(await me.prune(), 3, 'other, dead and remote have stale leases now');
    } finally {
      for (const r of [me, other, dead, remote]) await r.stop();
    }
  });

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
