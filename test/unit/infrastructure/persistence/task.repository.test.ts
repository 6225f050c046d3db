import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Task, TaskEvent, TaskState } from '../../../../src/domain/a2a.model.js';
import {
  openDatabase,
  SqlitePushConfigRepository,
  SqliteTaskRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

function task(id: string, contextId: string, state: TaskState = 'TASK_STATE_SUBMITTED', timestamp = at(0)): Task {
  return {
    id,
    contextId,
    status: { state, timestamp },
    history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: 'hello' }], taskId: id, contextId }],
  };
}

function statusEvent(t: Task, seq: number, state: TaskState, timestamp: string): TaskEvent {
  return { seq, kind: 'status', event: { taskId: t.id, contextId: t.contextId, status: { state, timestamp } } };
}

function chunk(t: Task, seq: number, text: string, append = true): TaskEvent {
  return {
    seq,
    kind: 'artifact',
    event: { taskId: t.id, contextId: t.contextId, artifact: { artifactId: 'out', parts: [{ text }] }, append },
  };
}

/** What the task service does on a status event: fold it into the task and store the result. */
function withStatus(t: Task, state: TaskState, timestamp: string): Task {
  return { ...structuredClone(t), status: { state, timestamp } };
}

const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

describe('SqliteTaskRepository', () => {
  let db: SqliteDatabase;
  let repo: SqliteTaskRepository;

  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
    repo = new SqliteTaskRepository(db);
  });
  afterEach(() => db.close());

  it('returns a created task with its owner at seq 0', async () => {
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    assert.deepEqual(await repo.get('t1'), { task: t, owner: 'alice', seq: 0 });
    assert.equal(await repo.get('nope'), undefined);
  });

  it('refuses a second task with the same id', async () => {
    await repo.create(task('t1', 'c1'), 'alice');
    await assert.rejects(repo.create(task('t1', 'c1'), 'alice'), reason('ALREADY_EXISTS'));
  });

  it('folds artifact events appended after the snapshot into get, with seq the last event', async () => {
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    const working = withStatus(t, 'TASK_STATE_WORKING', at(1));
    await repo.append('t1', statusEvent(t, 1, 'TASK_STATE_WORKING', at(1)), working);
    await repo.append('t1', chunk(t, 2, 'Hel', false));
    await repo.append('t1', chunk(t, 3, 'lo'));
    const got = await repo.get('t1');
    assert.equal(got?.seq, 3);
    assert.equal(got?.task.status.state, 'TASK_STATE_WORKING');
    assert.deepEqual(got?.task.artifacts, [{ artifactId: 'out', parts: [{ text: 'Hel' }, { text: 'lo' }] }]);
    // The status event moved the listing columns with the snapshot.
    const page = await repo.list({ owner: 'alice', state: 'TASK_STATE_WORKING', updatedSince: at(1), limit: 5 });
    assert.deepEqual(
      page.tasks.map((s) => s.task.id),
      ['t1'],
    );
  });

  it('does not fold events twice once a status event has stored a newer snapshot', async () => {
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    await repo.append('t1', chunk(t, 1, 'A', false));
    await repo.append('t1', chunk(t, 2, 'B'));
    const done: Task = {
      ...withStatus(t, 'TASK_STATE_COMPLETED', at(5)),
      artifacts: [{ artifactId: 'out', parts: [{ text: 'A' }, { text: 'B' }] }],
    };
    await repo.append('t1', statusEvent(t, 3, 'TASK_STATE_COMPLETED', at(5)), done);
    const got = await repo.get('t1');
    assert.equal(got?.seq, 3);
    assert.deepEqual(got?.task, done);
  });

  it('moves state and status time for a status event that comes without a snapshot', async () => {
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    await repo.append('t1', statusEvent(t, 1, 'TASK_STATE_FAILED', at(9)));
    const got = await repo.get('t1');
    assert.equal(got?.task.status.state, 'TASK_STATE_FAILED');
    assert.equal(got?.seq, 1);
    const page = await repo.list({ owner: 'alice', state: 'TASK_STATE_FAILED', limit: 10 });
    assert.deepEqual(
      page.tasks.map((s) => s.task.id),
      ['t1'],
    );
  });

  it('refuses events for an unknown task and a repeated sequence number', async () => {
    const t = task('t1', 'c1');
    await assert.rejects(repo.append('t1', chunk(t, 1, 'x')), reason('TASK_NOT_FOUND'));
    await repo.create(t, 'alice');
    await repo.append('t1', chunk(t, 1, 'x'));
    await assert.rejects(repo.append('t1', chunk(t, 1, 'y')), reason('INVALID_STATE'));
    assert.equal((await repo.eventsAfter('t1', 0)).length, 1);
  });

  it('returns the logged events after a sequence number, in order', async () => {
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    await repo.append('t1', chunk(t, 1, 'a', false));
    await repo.append('t1', statusEvent(t, 2, 'TASK_STATE_WORKING', at(1)), withStatus(t, 'TASK_STATE_WORKING', at(1)));
    await repo.append('t1', chunk(t, 3, 'b'));
    assert.deepEqual(await repo.eventsAfter('t1', 0), [
      chunk(t, 1, 'a', false),
      statusEvent(t, 2, 'TASK_STATE_WORKING', at(1)),
      chunk(t, 3, 'b'),
    ]);
    assert.deepEqual(
      (await repo.eventsAfter('t1', 2)).map((e) => e.seq),
      [3],
    );
    assert.deepEqual(await repo.eventsAfter('unknown', 0), []);
  });

  it('rewrites the snapshot with saveSnapshot and refuses an unknown task', async () => {
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    const more: Task = {
      ...t,
      history: [...(t.history ?? []), { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'again' }] }],
    };
    await repo.saveSnapshot(more, 0);
    assert.deepEqual(
      (await repo.get('t1'))?.task.history?.map((m) => m.messageId),
      ['m-t1', 'm2'],
    );
    await assert.rejects(repo.saveSnapshot(task('zz', 'c1'), 0), reason('TASK_NOT_FOUND'));
  });

  describe('list', () => {
    beforeEach(async () => {
      // t1..t5 share one status time; a6 is newer but sorts first by id; t7 is someone else's.
      for (const id of ['t1', 't2', 't3', 't4', 't5'])
        await repo.create(task(id, id <= 't2' ? 'c1' : 'c2', 'TASK_STATE_WORKING', at(10)), 'alice');
      await repo.create(task('a6', 'c1', 'TASK_STATE_COMPLETED', at(20)), 'alice');
      await repo.create(task('t7', 'c1', 'TASK_STATE_WORKING', at(30)), 'bob');
    });

    it('lists newest first, ties broken by id descending', async () => {
      const page = await repo.list({ owner: 'alice', limit: 10 });
      assert.deepEqual(
        page.tasks.map((s) => s.task.id),
        ['a6', 't5', 't4', 't3', 't2', 't1'],
      );
      assert.equal(page.total, 6);
      assert.equal(page.next, undefined);
    });

    it('pages through equal timestamps without skipping or repeating, total fixed', async () => {
      for (const limit of [1, 2, 4]) {
        const seen: string[] = [];
        let after;
        for (let pages = 0; pages < 10; pages++) {
          const page = await repo.list({ owner: 'alice', limit, after });
          assert.equal(page.total, 6);
          seen.push(...page.tasks.map((s) => s.task.id));
          if (!page.next) break;
          const last = page.tasks.at(-1)?.task;
          assert.deepEqual(page.next, { updatedAt: last?.status.timestamp, id: last?.id });
          after = page.next;
        }
        assert.deepEqual(seen, ['a6', 't5', 't4', 't3', 't2', 't1'], `limit ${limit}`);
      }
    });

    it('sets next only when more tasks follow', async () => {
      assert.notEqual((await repo.list({ owner: 'alice', limit: 5 })).next, undefined);
      assert.equal((await repo.list({ owner: 'alice', limit: 6 })).next, undefined);
    });

    it('filters by context, state and status time (inclusive, any ISO form)', async () => {
      const ids = async (q: Partial<Parameters<SqliteTaskRepository['list']>[0]>) =>
        (await repo.list({ owner: 'alice', limit: 10, ...q })).tasks.map((s) => s.task.id);
      assert.deepEqual(await ids({ contextId: 'c1' }), ['a6', 't2', 't1']);
      assert.deepEqual(await ids({ state: 'TASK_STATE_COMPLETED' }), ['a6']);
      assert.deepEqual(await ids({ contextId: 'c1', state: 'TASK_STATE_WORKING' }), ['t2', 't1']);
      assert.deepEqual(await ids({ updatedSince: '2026-03-01T10:00:20Z' }), ['a6']);
      assert.deepEqual(await ids({ updatedSince: '2026-03-01T11:00:10+01:00' }), ['a6', 't5', 't4', 't3', 't2', 't1']);
      const filtered = await repo.list({ owner: 'alice', contextId: 'c2', limit: 1 });
      assert.equal(filtered.total, 3);
      assert.deepEqual(filtered.next, { updatedAt: at(10), id: 't5' });
    });

    it('refuses an updatedSince that is not a timestamp', async () => {
      await assert.rejects(
        repo.list({ owner: 'alice', limit: 10, updatedSince: 'yesterday' }),
        reason('INVALID_PARAMS'),
      );
    });

    it('returns listed tasks with events after their snapshot folded in', async () => {
      const t = task('t1', 'c1');
      await repo.append('t1', chunk(t, 1, 'partial', false));
      const page = await repo.list({ owner: 'alice', contextId: 'c1', state: 'TASK_STATE_WORKING', limit: 10 });
      const t1 = page.tasks.find((s) => s.task.id === 't1');
      assert.equal(t1?.seq, 1);
      assert.deepEqual(t1?.task.artifacts, [{ artifactId: 'out', parts: [{ text: 'partial' }] }]);
    });
  });

  it('deletes a context with its events and push configs, leaving other contexts alone', async () => {
    const push = new SqlitePushConfigRepository(db);
    for (const [id, ctx] of [
      ['a1', 'ca'],
      ['a2', 'ca'],
      ['b1', 'cb'],
    ] as const) {
      const t = task(id, ctx);
      await repo.create(t, 'alice');
      await repo.append(id, chunk(t, 1, 'x', false));
      await push.put({ id: 'p', taskId: id, url: 'https://example.com/hook' });
    }
    assert.equal(await repo.countByContext('ca'), 2);
    assert.equal(await repo.deleteByContext('ca'), 2);
    assert.equal(await repo.countByContext('ca'), 0);
    assert.equal(await repo.get('a1'), undefined);
    assert.deepEqual(await repo.eventsAfter('a1', 0), []);
    assert.deepEqual(await push.list('a1'), []);
    assert.equal((await repo.get('b1'))?.seq, 1);
    assert.equal((await push.list('b1')).length, 1);
    const leftovers = db.sqlite.prepare("select count(*) from task_events where task_id like 'a%'").pluck().get();
    assert.equal(leftovers, 0);
    assert.equal(await repo.deleteByContext('ca'), 0);
  });

  it('lists the newest turns of a context, oldest first', async () => {
    for (let i = 1; i <= 4; i++) await repo.create(task(`t${i}`, 'c1', 'TASK_STATE_COMPLETED', at(i)), 'alice');
    await repo.create(task('x', 'c2'), 'alice');
    assert.deepEqual(
      (await repo.listByContext('c1', 3)).map((s) => s.task.id),
      ['t2', 't3', 't4'],
    );
    assert.deepEqual(
      (await repo.listByContext('c1', 10)).map((s) => s.task.id),
      ['t1', 't2', 't3', 't4'],
    );
  });
});

describe('SqliteTaskRepository on a file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-tasks-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('rebuilds a task from snapshot plus artifact events after a crash', async () => {
    const file = path.join(dir, 'state.db');
    const first = await openDatabase({ file });
    const repo = new SqliteTaskRepository(first);
    const t = task('t1', 'c1');
    await repo.create(t, 'alice');
    await repo.append('t1', statusEvent(t, 1, 'TASK_STATE_WORKING', at(1)), withStatus(t, 'TASK_STATE_WORKING', at(1)));
    await repo.append('t1', chunk(t, 2, 'one ', false));
    await repo.append('t1', chunk(t, 3, 'two'));
    // The process dies here: no final status, no snapshot, no clean close. Another process opens the file.
    const second = await openDatabase({ file });
    try {
      const got = await new SqliteTaskRepository(second).get('t1');
      assert.equal(got?.seq, 3);
      assert.equal(got?.owner, 'alice');
      assert.equal(got?.task.status.state, 'TASK_STATE_WORKING');
      assert.deepEqual(got?.task.artifacts, [{ artifactId: 'out', parts: [{ text: 'one ' }, { text: 'two' }] }]);
    } finally {
      await second.close();
      await first.close();
    }
    // And after both are gone, from the file alone.
    const third = await openDatabase({ file });
    try {
      assert.equal((await new SqliteTaskRepository(third).get('t1'))?.task.artifacts?.[0]?.parts.length, 2);
    } finally {
      await third.close();
    }
  });
});
