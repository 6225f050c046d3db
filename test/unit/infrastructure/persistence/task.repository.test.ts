import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Task, TaskEvent, TaskState } from '../../../../src/domain/a2a.model.ts';
import type { TaskListQuery, TaskRepository, Transcript, TranscriptStore } from '../../../../src/application/index.ts';
import { openDatabase, SqliteTaskRepository, SqliteTranscriptStore } from '../../../../src/infrastructure/index.ts';
import type { DB } from '../../../../src/infrastructure/persistence/database-schema.ts';
import { openPgDatabase } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';
import {
  parseTaskNotice,
  PgTaskRepository,
  taskNotice,
} from '../../../../src/infrastructure/persistence/postgres/pg-task.repository.ts';
import { PgTranscriptStore } from '../../../../src/infrastructure/persistence/postgres/pg-transcript.store.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';

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

const key = (messageId: string, hash = 'h1') => ({ owner: 'alice', messageId, hash });
const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

/** Every table a task writes to, children first (the suite empties them between tests). */
const TASK_TABLES = [
  'push_configs',
  'message_keys',
  'push_outbox',
  'task_events',
  'turn_transcripts',
  'tasks',
  'task_counts',
  'plans',
] as const;

/** The engine's task repository (a second one on the same database stands for another instance). */
function taskRepository(opened: OpenedEngine, runnerId = 'r1'): TaskRepository {
  if (opened.sqlite) return new SqliteTaskRepository(opened.sqlite, { runnerId });
  if (opened.pg) return new PgTaskRepository(opened.pg, { runnerId });
  throw new Error('no engine');
}

function transcriptStore(opened: OpenedEngine): TranscriptStore {
  if (opened.sqlite) return new SqliteTranscriptStore(opened.sqlite);
  if (opened.pg) return new PgTranscriptStore(opened.pg);
  throw new Error('no engine');
}

/** Another instance on the same data: its own connection(s), its own runner. */
async function secondInstance(opened: OpenedEngine, runnerId: string) {
  if (opened.sqlite) {
    const db = await openDatabase({ file: opened.location });
    return { repo: new SqliteTaskRepository(db, { runnerId }) as TaskRepository, close: () => db.close() };
  }
  const db = await openPgDatabase({ url: opened.location });
  return { repo: new PgTaskRepository(db, { runnerId }), close: () => db.close() };
}

for (const engine of ENGINES)
  describe(`task repository on ${engine.name}`, { skip: engine.skip() }, () => {
    let opened: OpenedEngine;
    let repo: TaskRepository;
    const kysely = (): Kysely<DB> => (opened.sqlite?.kysely ?? opened.pg?.kysely) as Kysely<DB>;
    const transcripts = () => transcriptStore(opened);

    before(async () => {
      opened = await engine.open();
    });
    after(() => opened.close());
    beforeEach(async () => {
      for (const table of TASK_TABLES) await kysely().deleteFrom(table).execute();
      repo = taskRepository(opened);
    });

    it('returns a created task with its owner at seq 0', async () => {
      const t = task('t1', 'c1');
      await repo.create(t, 'alice');
      assert.deepEqual(await repo.get('t1'), { task: t, owner: 'alice', seq: 0, runnerId: 'r1' });
      assert.equal(await repo.get('nope'), undefined);
    });

    it('refuses a second task with the same id', async () => {
      await repo.create(task('t1', 'c1'), 'alice');
      await assert.rejects(repo.create(task('t1', 'c1'), 'alice'), reason('ALREADY_EXISTS'));
    });

    it('folds the status messages appended after the snapshot into the history, in order and once each', async () => {
      const t = task('t1', 'c1');
      await repo.create(t, 'alice');
      const said = (seq: number, text: string): TaskEvent => {
        const ev = statusEvent(t, seq, 'TASK_STATE_WORKING', at(seq));
        if (ev.kind === 'status')
          ev.event.status.message = { messageId: `s${seq}`, role: 'ROLE_AGENT', parts: [{ text }], taskId: 't1' };
        return ev;
      };
      // What the recorder stores between two snapshots of a running task: messages in events only.
      await repo.append('t1', said(1, 'one'));
      await repo.append('t1', chunk(t, 2, 'x', false));
      await repo.append('t1', said(3, 'three'));
      const texts = async () =>
        (await repo.get('t1'))?.task.history?.map((m) => m.parts.map((p) => p.text).join('')) ?? [];
      assert.deepEqual(await texts(), ['hello', 'one', 'three']);
      const listed = await repo.list({ owner: 'alice', limit: 5 });
      assert.deepEqual(
        listed.tasks[0]?.task.history?.map((m) => m.messageId),
        ['m-t1', 's1', 's3'],
      );
      // Then a snapshot that holds them all: nothing is counted twice.
      const held = (await repo.get('t1'))?.task as Task;
      const ev4 = said(4, 'four');
      if (ev4.kind === 'status')
        (held.history ??= []).push(ev4.event.status.message as NonNullable<typeof ev4.event.status.message>);
      await repo.append('t1', ev4, { ...held, status: { state: 'TASK_STATE_WORKING', timestamp: at(4) } });
      await repo.append('t1', said(5, 'five'));
      assert.deepEqual(await texts(), ['hello', 'one', 'three', 'four', 'five']);
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

    it('reads a snapshot nothing follows as its text for GetTask, and folds the events in once something does', async () => {
      const t = task('t1', 'c1');
      await repo.create(t, 'alice');
      const created = await repo.getView('t1');
      assert.ok(created && 'view' in created, 'a task as created is its own view');
      assert.equal(created.owner, 'alice');
      assert.deepEqual(JSON.parse(created.view.json), t);
      assert.deepEqual(created.view.value, t);
      // An event after the snapshot: the view would be stale, so the task is read as get reads it.
      await repo.append('t1', chunk(t, 1, 'A', false));
      const followed = await repo.getView('t1');
      assert.ok(followed && 'task' in followed);
      assert.deepEqual(followed, await repo.get('t1'));
      assert.deepEqual(followed.task.artifacts, [{ artifactId: 'out', parts: [{ text: 'A' }] }]);
      const done: Task = { ...withStatus(t, 'TASK_STATE_COMPLETED', at(5)), artifacts: followed.task.artifacts ?? [] };
      await repo.append('t1', statusEvent(t, 2, 'TASK_STATE_COMPLETED', at(5)), done);
      const settled = await repo.getView('t1');
      assert.ok(settled && 'view' in settled);
      assert.deepEqual(settled.view.value, done);
      assert.equal(await repo.getView('nope'), undefined);
    });

    it('does not read a snapshot holding an empty list as a view (a view leaves empty lists out)', async () => {
      const t: Task = { ...task('t1', 'c1'), artifacts: [] };
      await repo.create(t, 'alice');
      const got = await repo.getView('t1');
      assert.ok(got && 'task' in got);
      assert.deepEqual(got.task, t);
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
      await repo.append(
        't1',
        statusEvent(t, 2, 'TASK_STATE_WORKING', at(1)),
        withStatus(t, 'TASK_STATE_WORKING', at(1)),
      );
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
        const ids = async (q: Partial<TaskListQuery>) =>
          (await repo.list({ owner: 'alice', limit: 10, ...q })).tasks.map((s) => s.task.id);
        assert.deepEqual(await ids({ contextId: 'c1' }), ['a6', 't2', 't1']);
        assert.deepEqual(await ids({ state: 'TASK_STATE_COMPLETED' }), ['a6']);
        assert.deepEqual(await ids({ contextId: 'c1', state: 'TASK_STATE_WORKING' }), ['t2', 't1']);
        assert.deepEqual(await ids({ updatedSince: '2026-03-01T10:00:20Z' }), ['a6']);
        assert.deepEqual(await ids({ updatedSince: '2026-03-01T11:00:10+01:00' }), [
          'a6',
          't5',
          't4',
          't3',
          't2',
          't1',
        ]);
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

    it('deletes a context with its events, push configs, keys and transcripts, leaving other contexts alone', async () => {
      for (const [id, ctx] of [
        ['a1', 'ca'],
        ['a2', 'ca'],
        ['b1', 'cb'],
      ] as const) {
        const t = task(id, ctx);
        await repo.create(t, 'alice');
        await repo.append(id, chunk(t, 1, 'x', false));
        await kysely().insertInto('push_configs').values({ task_id: id, id: 'p', config: '{}' }).execute();
        await repo.saveSnapshot(t, 1, { owner: 'alice', messageId: `follow-${id}`, hash: 'h' });
      }
      await transcripts().save('a1', 'ca', { messages: [], toolCalls: 0 } as unknown as Transcript);
      assert.equal(await repo.countByContext('ca'), 2);
      assert.equal(await repo.deleteByContext('ca'), 2);
      assert.equal(await repo.countByContext('ca'), 0);
      assert.equal(await repo.get('a1'), undefined);
      assert.deepEqual(await repo.eventsAfter('a1', 0), []);
      assert.equal(await repo.findMessageKey('alice', 'follow-a1'), undefined);
      assert.equal(await transcripts().get('a1'), undefined);
      assert.equal((await repo.get('b1'))?.seq, 1);
      assert.equal((await repo.findMessageKey('alice', 'follow-b1'))?.taskId, 'b1');
      const rows = async (table: 'push_configs' | 'task_events', like: string) =>
        (
          await kysely()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('task_id', 'like', like)
            .executeTakeFirstOrThrow()
        ).n;
      assert.equal(await rows('push_configs', 'a%'), 0);
      assert.equal(await rows('task_events', 'a%'), 0);
      assert.equal(await rows('push_configs', 'b%'), 1);
      // The maintained counts follow: the owner's total and the emptied context.
      assert.equal((await repo.list({ owner: 'alice', limit: 10 })).total, 1);
      assert.equal((await repo.list({ owner: 'alice', contextId: 'ca', limit: 10 })).total, 0);
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
    it('stores a message key with its task, refuses a second task for the same key, and deletes it with the task', async () => {
      await repo.create(task('t1', 'c1'), 'alice', key('m1'));
      assert.deepEqual(await repo.findMessageKey('alice', 'm1'), { taskId: 't1', hash: 'h1' });
      assert.equal(await repo.findMessageKey('bob', 'm1'), undefined, 'keys are per principal');
      // Two sends racing: the loser stores nothing at all.
      await assert.rejects(
        repo.create(task('t2', 'c1'), 'alice', key('m1')),
        (err: { reason?: string; details?: Record<string, unknown> }) =>
          err.reason === 'ALREADY_EXISTS' && err.details?.['messageId'] === 'm1',
      );
      assert.equal(await repo.get('t2'), undefined);
      assert.equal(await repo.countByContext('c1'), 1);
      assert.equal((await repo.list({ owner: 'alice', limit: 10 })).total, 1, 'the loser is not counted');
      // A follow-up's key goes with the snapshot write.
      await repo.saveSnapshot(task('t1', 'c1'), 0, key('m2'));
      assert.equal((await repo.findMessageKey('alice', 'm2'))?.taskId, 't1');
      await assert.rejects(
        repo.saveSnapshot(task('t1', 'c1'), 0, key('m2')),
        (err: { reason?: string; details?: Record<string, unknown> }) =>
          err.reason === 'ALREADY_EXISTS' && err.details?.['messageId'] === 'm2',
      );
      // A follow-up key for a task that is not there is not stored.
      await assert.rejects(repo.saveSnapshot(task('zz', 'c1'), 0, key('m3')), reason('TASK_NOT_FOUND'));
      assert.equal(await repo.findMessageKey('alice', 'm3'), undefined);
      await repo.deleteByContext('c1');
      assert.equal(await repo.findMessageKey('alice', 'm1'), undefined);
      assert.equal(await repo.findMessageKey('alice', 'm2'), undefined);
    });

    it('lists running turns with their runner; a turn that ended leaves its open task unowned', async () => {
      await repo.create(task('t1', 'c1'), 'alice');
      await repo.create(task('t2', 'c1'), 'alice');
      await repo.create(task('t3', 'c1', 'TASK_STATE_COMPLETED'), 'bob');
      assert.deepEqual((await repo.listRunning()).map((t) => [t.id, t.owner, t.runnerId]).sort(), [
        ['t1', 'alice', 'r1'],
        ['t2', 'alice', 'r1'],
      ]);
      await repo.endTurn('t2');
      assert.deepEqual(
        (await repo.listRunning()).map((t) => t.id),
        ['t1'],
      );
      assert.equal((await repo.get('t1'))?.runnerId, 'r1');
      assert.equal((await repo.get('t2'))?.runnerId, undefined);
      // Another runner's endTurn leaves the turn alone; saveSnapshot claims the task for its runner.
      const other = taskRepository(opened, 'r2');
      await other.endTurn('t1');
      assert.equal((await repo.get('t1'))?.runnerId, 'r1');
      await other.saveSnapshot(task('t2', 'c1'), 0);
      assert.equal((await repo.get('t2'))?.runnerId, 'r2');
    });

    it('refuses a taken sequence number with its task and seq in the details', async () => {
      const t = task('t1', 'c1');
      await repo.create(t, 'alice');
      await repo.append('t1', chunk(t, 1, 'x'));
      await assert.rejects(
        repo.append('t1', statusEvent(t, 1, 'TASK_STATE_WORKING', at(1)), withStatus(t, 'TASK_STATE_WORKING', at(1))),
        (err: { reason?: string; details?: Record<string, unknown> }) =>
          err.reason === 'INVALID_STATE' && err.details?.['taskId'] === 't1' && err.details['seq'] === 1,
      );
      assert.equal((await repo.get('t1'))?.task.status.state, 'TASK_STATE_SUBMITTED', 'the snapshot did not move');
    });

    it('applies appends of one task in call order when they are issued without awaiting', async () => {
      const t = task('t1', 'c1');
      await repo.create(t, 'alice');
      await repo.create(task('t2', 'c1'), 'alice');
      const writes: Promise<void>[] = [];
      for (let seq = 1; seq <= 40; seq++) {
        // Every other event is a status with a snapshot: the last one issued must be the stored one,
        // though every other snapshot is large (slow to send) and the next small one could overtake it.
        const snapshot = withStatus(t, 'TASK_STATE_WORKING', at(seq));
        if (seq % 4 === 2) snapshot.artifacts = [{ artifactId: 'big', parts: [{ text: 'x'.repeat(500_000) }] }];
        writes.push(
          seq % 2 === 0
            ? repo.append('t1', statusEvent(t, seq, 'TASK_STATE_WORKING', at(seq)), snapshot)
            : repo.append('t1', chunk(t, seq, `${seq}`)),
        );
        writes.push(repo.append('t2', chunk(t, seq, `${seq}`)));
      }
      await Promise.all(writes);
      const got = await repo.get('t1');
      assert.equal(got?.task.status.timestamp, at(40));
      assert.equal(got?.task.artifacts, undefined);
      assert.equal(got?.seq, 40);
      assert.deepEqual(
        (await repo.eventsAfter('t2', 0)).map((e) => e.seq),
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
    });

    it('lists tasks as their last status or snapshot left them when a burst is issued without awaiting', async () => {
      const [t1, t2, t3] = [task('t1', 'c1'), task('t2', 'c1'), task('t3', 'c2')];
      for (const t of [t1, t2, t3]) await repo.create(t, 'alice');
      await Promise.all([
        repo.append('t1', statusEvent(t1, 1, 'TASK_STATE_WORKING', at(1))),
        repo.append('t2', statusEvent(t2, 1, 'TASK_STATE_WORKING', at(1))),
        repo.append('t3', statusEvent(t3, 1, 'TASK_STATE_WORKING', at(1)), withStatus(t3, 'TASK_STATE_WORKING', at(1))),
        repo.append('t1', chunk(t1, 2, 'x')),
        repo.append('t1', statusEvent(t1, 3, 'TASK_STATE_WORKING', at(3))),
        // A snapshot after a plain status: the snapshot's columns stay.
        repo.append(
          't2',
          statusEvent(t2, 2, 'TASK_STATE_COMPLETED', at(2)),
          withStatus(t2, 'TASK_STATE_COMPLETED', at(2)),
        ),
        // A plain status after a snapshot: the status's columns.
        repo.append('t3', statusEvent(t3, 2, 'TASK_STATE_WORKING', at(4))),
      ]);
      const ids = async (q: Partial<TaskListQuery>) =>
        (await repo.list({ owner: 'alice', limit: 10, ...q })).tasks.map((s) => s.task.id);
      assert.deepEqual(await ids({ state: 'TASK_STATE_WORKING' }), ['t3', 't1']);
      assert.deepEqual(await ids({ state: 'TASK_STATE_COMPLETED' }), ['t2']);
      assert.deepEqual(await ids({ updatedSince: at(3) }), ['t3', 't1']);
      assert.equal((await repo.get('t1'))?.task.status.timestamp, at(3));
      assert.equal((await repo.get('t3'))?.task.status.timestamp, at(4));
      // Deleting a context in the same burst as a status of one of its tasks.
      const t4 = task('t4', 'c3');
      await repo.create(t4, 'alice');
      const [appended, deleted] = await Promise.allSettled([
        repo.append('t4', statusEvent(t4, 1, 'TASK_STATE_WORKING', at(5))),
        repo.deleteByContext('c3'),
      ]);
      assert.equal(deleted.status, 'fulfilled');
      if (engine.name === 'sqlite') {
        // One connection: the group runs the calls in their order.
        assert.equal(appended.status, 'fulfilled');
      } else if (appended.status === 'rejected') {
        // A pool: the delete may commit first, and then the status has no task to land on.
        assert.ok(reason('TASK_NOT_FOUND')(appended.reason), String(appended.reason));
      }
      assert.equal(await repo.get('t4'), undefined);
      assert.deepEqual(await ids({}), ['t3', 't1', 't2']);
    });

    describe('deleteExpired', () => {
      const live = new Set<string>();
      const expiry = (e: { before?: string; keep?: number; limit?: number }) => ({
        limit: 100,
        ...e,
        isLive: (id: string) => live.has(id),
      });
      beforeEach(async () => {
        live.clear();
        // Finished f1..f4 (oldest first) in two contexts, one still working, one of a plan's chat.
        for (let i = 1; i <= 4; i++)
          await repo.create(task(`f${i}`, i <= 2 ? 'c1' : 'c2', 'TASK_STATE_COMPLETED', at(i)), 'alice');
        await repo.create(task('w', 'c1', 'TASK_STATE_WORKING', at(0)), 'alice');
        await repo.create(task('p', 'plan-chat', 'TASK_STATE_COMPLETED', at(0)), 'alice');
        await kysely()
          .insertInto('plans')
          .values({
            id: 'plan-1',
            owner: 'alice',
            action: 'a',
            phase: 'p',
            state: 's',
            created_at: at(0),
            updated_at: at(0),
            doc: JSON.stringify({ id: 'plan-1', contextId: 'plan-chat' }),
          })
          .execute();
      });

      it("deletes finished tasks older than the age, never a live one nor a plan's, and keeps the counts right", async () => {
        live.add('f1');
        assert.equal(await repo.deleteExpired(expiry({ before: at(3) })), 1);
        assert.deepEqual((await repo.list({ owner: 'alice', limit: 10 })).tasks.map((s) => s.task.id).sort(), [
          'f1',
          'f3',
          'f4',
          'p',
          'w',
        ]);
        assert.equal((await repo.list({ owner: 'alice', limit: 10 })).total, 5);
        assert.equal((await repo.list({ owner: 'alice', contextId: 'c1', limit: 10 })).total, 2);
        live.clear();
        assert.equal(await repo.deleteExpired(expiry({ before: at(10) })), 3);
        assert.equal((await repo.list({ owner: 'alice', limit: 10 })).total, 2);
        assert.equal((await repo.list({ owner: 'alice', contextId: 'c2', limit: 10 })).total, 0);
        assert.equal((await repo.list({ owner: 'alice', contextId: 'plan-chat', limit: 10 })).total, 1);
      });

      it('keeps only the newest finished tasks beyond a count, at most a limit per call', async () => {
        assert.equal(await repo.deleteExpired(expiry({ keep: 1, limit: 2 })), 2);
        assert.equal(await repo.deleteExpired(expiry({ keep: 1, limit: 2 })), 1);
        assert.equal(await repo.deleteExpired(expiry({ keep: 1 })), 0);
        assert.deepEqual((await repo.list({ owner: 'alice', limit: 10 })).tasks.map((s) => s.task.id).sort(), [
          'f4',
          'p',
          'w',
        ]);
        assert.equal((await repo.list({ owner: 'alice', limit: 10 })).total, 3);
      });

      it('two instances sweeping at once delete each task once and keep the counts right', async () => {
        for (let i = 10; i < 40; i++) await repo.create(task(`g${i}`, `c${i % 3}`, 'TASK_STATE_FAILED', at(i)), 'bob');
        const second = await secondInstance(opened, 'r2');
        try {
          const sweeps = await Promise.all([
            repo.deleteExpired(expiry({ before: at(100), limit: 20 })),
            second.repo.deleteExpired(expiry({ before: at(100), limit: 20 })),
          ]);
          const left = await repo.deleteExpired(expiry({ before: at(100) }));
          assert.equal(sweeps[0] + sweeps[1] + left, 34, 'f1..f4 and g10..g39, each once');
          assert.equal((await repo.list({ owner: 'bob', limit: 10 })).total, 0);
          assert.equal((await repo.list({ owner: 'bob', contextId: 'c1', limit: 10 })).total, 0);
          assert.equal((await repo.list({ owner: 'alice', limit: 10 })).total, 2);
        } finally {
          await second.close();
        }
      });
    });

    it('stores, replaces and finds transcripts by context', async () => {
      await repo.create(task('t1', 'c1'), 'alice');
      await repo.create(task('t2', 'c1'), 'alice');
      const doc = (n: number) =>
        ({ messages: [{ role: 'user', content: `turn ${n}` }], toolCalls: n }) as unknown as Transcript;
      const store = transcripts();
      assert.equal(await store.get('t1'), undefined);
      await store.save('t1', 'c1', doc(1));
      await store.save('t1', 'c1', doc(2));
      await store.save('t2', 'c1', doc(3));
      assert.deepEqual(await store.get('t1'), doc(2));
      assert.deepEqual([...(await store.forContext('c1', ['t2', 'nope']))], [['t2', doc(3)]]);
      assert.deepEqual([...(await store.forContext('c2', ['t1']))], []);
    });

    it(
      'tells another instance of every committed create, append and snapshot, with its seq and runner',
      {
        skip: engine.name === 'sqlite' ? 'SQLite followers poll logVersion' : false,
        timeout: 20_000,
      },
      async () => {
        const b = await secondInstance(opened, 'rB');
        const seen: string[] = [];
        let wake: () => void = () => {};
        const stop = await b.repo.watch?.((taskId, seq, runnerId) => {
          seen.push(taskNotice(taskId, seq, runnerId));
          wake();
        });
        assert.ok(stop, 'PostgreSQL watches');
        const expect = async (n: number) => {
          while (seen.length < n) await new Promise<void>((r) => (wake = r));
        };
        try {
          const t = task('t 1', 'c1');
          await repo.create(t, 'alice');
          await expect(1);
          await repo.append('t 1', chunk(t, 1, 'x'));
          await expect(2);
          await repo.saveSnapshot(t, 1);
          await expect(3);
          // A refused write notifies nobody: only committed events are announced.
          await assert.rejects(repo.append('t 1', chunk(t, 1, 'again')), reason('INVALID_STATE'));
          await repo.append('t 1', chunk(t, 2, 'y'));
          await expect(4);
          assert.deepEqual(seen, ['t 1 0 r1', 't 1 1 r1', 't 1 1 r1', 't 1 2 r1']);
          // An empty payload (the listener reconnected) is "look at every task again".
          await opened.pg?.notify('ca_task_events', '');
          await expect(5);
          assert.equal(seen[4], taskNotice('', 0, ''));
        } finally {
          await stop?.();
          await b.close();
        }
      },
    );
  });

describe('task notifications', () => {
  it('parse back what they carry, a task id with spaces and an empty runner included', () => {
    assert.deepEqual(parseTaskNotice(taskNotice('a b', 7, 'r1')), { taskId: 'a b', seq: 7, runnerId: 'r1' });
    assert.deepEqual(parseTaskNotice(taskNotice('t', 0, '')), { taskId: 't', seq: 0, runnerId: '' });
    assert.equal(parseTaskNotice('garbage'), undefined);
    assert.equal(parseTaskNotice('t x r'), undefined);
  });
});

describe('SqliteTaskRepository (SQLite only) on a file', () => {
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
