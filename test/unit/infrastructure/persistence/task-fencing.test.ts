/**
 * Fencing (issue #40, point 4) and the outbox in the event's statement (point 5), on both engines:
 * the database itself refuses an event after a task's final one, and a turn's event once the task
 * no longer names the turn's runner — so an instance paused past its lease writes nothing after
 * another settled its task. A second repository with another runner id stands for another instance.
 */
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Task, TaskEvent, TaskState } from '../../../../src/domain/a2a.model.ts';
import type { StoredPushConfig, TaskRepository } from '../../../../src/application/index.ts';
import { SqliteTaskRepository } from '../../../../src/infrastructure/index.ts';
import { PgTaskRepository } from '../../../../src/infrastructure/persistence/postgres/pg-task.repository.ts';
import { ENGINES, POSTGRES, type OpenedEngine } from '../../../support/engines.ts';

const AT = '2026-03-01T10:00:00.000Z';

function task(id: string, state: TaskState = 'TASK_STATE_WORKING'): Task {
  return { id, contextId: `ctx-${id}`, status: { state, timestamp: AT } };
}

function status(t: Task, seq: number, state: TaskState): TaskEvent {
  return { seq, kind: 'status', event: { taskId: t.id, contextId: t.contextId, status: { state, timestamp: AT } } };
}

function chunk(t: Task, seq: number, text: string): TaskEvent {
  return {
    seq,
    kind: 'artifact',
    event: { taskId: t.id, contextId: t.contextId, artifact: { artifactId: 'out', parts: [{ text }] } },
  };
}

function repository(opened: OpenedEngine, runnerId: string): TaskRepository {
  if (opened.sqlite) return new SqliteTaskRepository(opened.sqlite, { runnerId });
  if (opened.pg) return new PgTaskRepository(opened.pg, { runnerId });
  throw new Error('no engine');
}

const fencedOff = (err: unknown): boolean => {
  const e = err as { reason?: string; details?: Record<string, unknown> };
  return e.reason === 'INVALID_STATE' && e.details?.['fenced'] === true;
};

for (const engine of ENGINES) {
  describe(`task fencing on ${engine.name}`, { skip: engine.skip() }, () => {
    let opened: OpenedEngine;
    let a: TaskRepository;
    let b: TaskRepository;
    before(async () => {
      opened = await engine.open();
    });
    after(() => opened?.close());
    beforeEach(() => {
      a = repository(opened, 'runner-a');
      b = repository(opened, 'runner-b');
    });

    it("refuses a paused turn's events once another instance settled its task: nothing follows the final event", async () => {
      const t = task('t-paused');
      await a.create(t, 'alice');
      await a.append(t.id, chunk(t, 1, 'first'), undefined, undefined, true);
      // B took A for dead and settled the task (unfenced: it is not B's turn).
      const failed: Task = { ...t, status: { state: 'TASK_STATE_FAILED', timestamp: AT } };
      await b.append(t.id, status(t, 2, 'TASK_STATE_FAILED'), failed);
      // A wakes up and goes on with its turn: each write is refused by the database.
      await assert.rejects(a.append(t.id, chunk(t, 3, 'late')), fencedOff);
      await assert.rejects(
        a.append(
          t.id,
          status(t, 3, 'TASK_STATE_COMPLETED'),
          { ...t, status: { state: 'TASK_STATE_COMPLETED' } },
          undefined,
          true,
        ),
        fencedOff,
      );
      await assert.rejects(a.append(t.id, status(t, 4, 'TASK_STATE_WORKING'), undefined, undefined, true), fencedOff);
      const stored = await a.get(t.id);
      assert.equal(stored?.task.status.state, 'TASK_STATE_FAILED');
      assert.equal(stored?.seq, 2);
      assert.deepEqual(
        (await a.eventsAfter(t.id, 0)).map((e) => e.seq),
        [1, 2],
      );
    });

    it("refuses a turn's event when the task names another runner, but not another process's unfenced write", async () => {
      const t = task('t-moved', 'TASK_STATE_INPUT_REQUIRED');
      await a.create(t, 'alice');
      // B claims the task (a follow-up sent to B).
      await b.saveSnapshot({ ...t, status: { state: 'TASK_STATE_WORKING', timestamp: AT } }, 0);
      await assert.rejects(a.append(t.id, chunk(t, 1, 'stale turn'), undefined, undefined, true), fencedOff);
      await b.append(t.id, chunk(t, 1, "B's turn"), undefined, undefined, true);
      // A cancel sent to A is not a turn: it is written whoever runs the task.
      await a.append(t.id, status(t, 2, 'TASK_STATE_CANCELED'), { ...t, status: { state: 'TASK_STATE_CANCELED' } });
      assert.equal((await a.get(t.id))?.task.status.state, 'TASK_STATE_CANCELED');
    });

    it('still says a missing task is not found', async () => {
      await assert.rejects(
        a.append('t-none', chunk(task('t-none'), 1, 'x'), undefined, undefined, true),
        (err: unknown) => (err as { reason?: string }).reason === 'TASK_NOT_FOUND',
      );
    });
  });
}

describe('the push outbox on postgresql', { skip: POSTGRES.skip() }, () => {
  let opened: OpenedEngine;
  before(async () => {
    opened = await POSTGRES.open();
  });
  after(() => opened?.close());
  afterEach(async () => {
    await sql`delete from tasks`.execute(opened.pg!.kysely);
  });

  it("queues an event's deliveries in the event's own statement, for every config of its task", async () => {
    const a = repository(opened, 'runner-a');
    const t = task('t-hooked');
    const push: StoredPushConfig = { id: 'hook-1', taskId: t.id, url: 'https://hooks.example/1' };
    await a.create(t, 'alice', undefined, push);
    // A config created later (e.g. on another instance) is queued for too.
    await sql`insert into push_configs (task_id, id, config) values (${t.id}, 'hook-2', '{}')`.execute(
      opened.pg!.kysely,
    );
    const ev = chunk(t, 1, 'hello');
    await a.append(t.id, ev, undefined, undefined, true);
    const rows = await sql<{ config_id: string; seq: number; payload: string; runner_id: string }>`
      select config_id, seq, payload, runner_id from push_outbox where task_id = ${t.id} order by config_id`.execute(
      opened.pg!.kysely,
    );
    assert.deepEqual(
      rows.rows.map((r) => [r.config_id, r.seq, JSON.parse(r.payload), r.runner_id]),
      ['hook-1', 'hook-2'].map((c) => [c, 1, { artifactUpdate: ev.event }, 'runner-a']),
    );
  });

  it('queues nothing for a refused event', async () => {
    const a = repository(opened, 'runner-a');
    const t = task('t-refused', 'TASK_STATE_COMPLETED');
    await a.create(t, 'alice', undefined, { id: 'hook-1', taskId: t.id, url: 'https://hooks.example/1' });
    await assert.rejects(a.append(t.id, chunk(t, 1, 'late')), fencedOff);
    const n = await sql<{ n: number }>`select count(*)::int as n from push_outbox`.execute(opened.pg!.kysely);
    assert.equal(n.rows[0]?.n, 0);
  });
});
