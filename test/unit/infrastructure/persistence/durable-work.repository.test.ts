/** Message keys and runner leases in SQLite (migration 0005; the push outbox: push-outbox.repository.test.ts). */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '../../../../src/domain/a2a.model.js';
import { silentLogger } from '../../../../src/application/index.js';
import {
  openDatabase,
  SqliteRunnerRegistry,
  SqliteTaskRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.js';

const task = (id: string, contextId = 'c1'): Task => ({
  id,
  contextId,
  status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-03-01T10:00:00.000Z' },
});
const key = (messageId: string, hash = 'h1') => ({ owner: 'alice', messageId, hash });

describe('durable work in SQLite', () => {
  let db: SqliteDatabase;
  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
  });
  afterEach(() => db.close());

  it('stores a message key with its task, refuses a second task for the same key, and deletes it with the task', async () => {
    const repo = new SqliteTaskRepository(db, { runnerId: 'r1' });
    await repo.create(task('t1'), 'alice', key('m1'));
    assert.deepEqual(await repo.findMessageKey('alice', 'm1'), { taskId: 't1', hash: 'h1' });
    assert.equal(await repo.findMessageKey('bob', 'm1'), undefined, 'keys are per principal');
    // Two sends racing: the loser stores nothing at all.
    await assert.rejects(
      repo.create(task('t2'), 'alice', key('m1')),
      (err: { reason?: string; details?: Record<string, unknown> }) =>
        err.reason === 'ALREADY_EXISTS' && err.details?.['messageId'] === 'm1',
    );
    assert.equal(await repo.get('t2'), undefined);
    assert.equal(await repo.countByContext('c1'), 1);
    // A follow-up's key goes with the snapshot write.
    await repo.saveSnapshot(task('t1'), 0, key('m2'));
    assert.equal((await repo.findMessageKey('alice', 'm2'))?.taskId, 't1');
    await assert.rejects(
      repo.saveSnapshot(task('t1'), 0, key('m2')),
      (err: { reason?: string }) => err.reason === 'ALREADY_EXISTS',
    );
    await repo.deleteByContext('c1');
    assert.equal(await repo.findMessageKey('alice', 'm1'), undefined);
    assert.equal(await repo.findMessageKey('alice', 'm2'), undefined);
  });

  it('lists running turns with their runner; a turn that ended leaves its open task unowned', async () => {
    const repo = new SqliteTaskRepository(db, { runnerId: 'r1' });
    await repo.create(task('t1'), 'alice');
    await repo.create(task('t2'), 'alice');
    assert.deepEqual((await repo.listRunning()).map((t) => [t.id, t.runnerId]).sort(), [
      ['t1', 'r1'],
      ['t2', 'r1'],
    ]);
    await repo.endTurn('t2');
    assert.deepEqual(
      (await repo.listRunning()).map((t) => t.id),
      ['t1'],
    );
    assert.equal((await repo.get('t1'))?.runnerId, 'r1');
  });

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
});
