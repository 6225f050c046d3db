/**
 * A turn against a store that stops taking its writes (issue #40): a database blip (point 3) ends
 * the turn, tells its client what was stored — not that nothing was changed — and the task is
 * settled FAILED by the turn's own process once storage answers again, never left working; a
 * process paused past its lease (point 4) whose task another settled writes nothing after the
 * final event, even events it had already handed to storage. Real SQLite repositories.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Task } from '../../../../src/domain/a2a.model.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import type { Actor, ActorCatalog, ActorTurn, TaskRepository } from '../../../../src/application/index.ts';
import { LOCAL_PRINCIPAL, silentLogger } from '../../../../src/application/index.ts';
import { SessionService } from '../../../../src/application/sessions/session.service.ts';
import { buildTasks, type TaskParts } from '../../../../src/main/composition/tasks.wiring.ts';
import {
  openDatabase,
  SqliteSessionRepository,
  SqliteTaskRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';

const text = (t: string) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER' as const, parts: [{ text: t }] },
});

/** The real repository whose appends fail (as a lost database does) while `down` is set. */
function blinking(inner: TaskRepository): { repo: TaskRepository; down: boolean } {
  const state = { repo: Object.create(inner) as TaskRepository, down: false };
  state.repo.append = (...args: Parameters<TaskRepository['append']>) =>
    state.down
      ? Promise.reject(
          new AppError(
            'UNAVAILABLE',
            'Storage is unavailable: the database server cannot be reached; nothing was changed by this request',
            { details: { correlationId: 'injected' } },
          ),
        )
      : inner.append(...args);
  return state;
}

/** What the test's actor does with a turn (set per test). */
let script: (turn: ActorTurn) => Promise<void> = async () => {};

function partsOver(db: SqliteDatabase, tasks: TaskRepository): TaskParts {
  const actor: Actor = { name: 'test/scripted', description: 'runs the test script', handle: (turn) => script(turn) };
  const actors: ActorCatalog = {
    resolve: async () => actor,
    names: () => ['test/scripted'],
    available: async () => ({ names: ['test/scripted'], more: 0 }),
  };
  const sessions = new SessionService({
    sessions: new SqliteSessionRepository(db),
    tasks,
    actors,
    defaultActor: 'test/scripted',
  });
  return buildTasks({ tasks, sessions, actors, logger: silentLogger });
}

const stateOf = (item: any): string | undefined =>
  item?.payload?.statusUpdate?.status?.state ?? item?.payload?.task?.status?.state;

describe('a turn whose store fails or whose task another process settled', () => {
  let dir: string;
  let db: SqliteDatabase;
  let inner: SqliteTaskRepository;
  let other: SqliteTaskRepository;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-turn-storage-'));
    db = await openDatabase({ file: join(dir, 'state.db') });
    inner = new SqliteTaskRepository(db, { runnerId: 'runner-a' });
    // Another process on the same database (local mode: another agent; server: another instance).
    other = new SqliteTaskRepository(db, { runnerId: 'runner-b' });
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    script = async () => {};
  });

  it('settles a turn that lost the database as FAILED once it is back, and tells its client what was stored', async () => {
    const store = blinking(inner);
    const parts = partsOver(db, store.repo);
    script = async (turn) => {
      await turn.status('TASK_STATE_WORKING', 'step 1');
      await turn.stored();
      store.down = true;
      await turn.status('TASK_STATE_WORKING', 'step 2');
      await turn.status('TASK_STATE_WORKING', 'step 3');
      await turn.status('TASK_STATE_COMPLETED', 'done');
    };
    const items: unknown[] = [];
    let failure: unknown;
    try {
      for await (const item of await parts.service.stream(text('blip'), LOCAL_PRINCIPAL)) items.push(item);
    } catch (err) {
      failure = err;
    }
    const taskId = (items[0] as { payload: { task: Task } }).payload.task.id;
    assert.ok(failure instanceof AppError, 'the stream ends with the storage failure');
    assert.equal(failure.reason, 'UNAVAILABLE');
    assert.doesNotMatch(failure.message, /nothing was changed/, 'the task and its first event were stored');
    assert.match(failure.message, /events up to 1 are stored/);
    assert.equal(failure.details['correlationId'], 'injected', 'the store’s correlation id is kept');

    // Still working in the store, run by a live process: nothing else would ever settle it.
    assert.equal((await inner.get(taskId))?.task.status.state, 'TASK_STATE_WORKING');
    assert.deepEqual(
      (await inner.listRunning()).map((t) => [t.id, t.runnerId]),
      [[taskId, 'runner-a']],
    );
    // A subscriber (here) waits for the truth: its stream is open once it has the task.
    const subscription = (await parts.service.subscribe(taskId, LOCAL_PRINCIPAL))[Symbol.asyncIterator]();
    const opened = await subscription.next();
    assert.equal(stateOf(opened.value), 'TASK_STATE_WORKING');
    const watching = (async () => {
      const seen: unknown[] = [];
      for (let r = await subscription.next(); !r.done; r = await subscription.next()) seen.push(r.value);
      return seen;
    })();
    // Still down: nothing is settled, and the task stays to be tried again.
    assert.deepEqual(await parts.turns.settleLost(), []);
    store.down = false;
    assert.deepEqual(await parts.turns.settleLost(), [taskId]);
    const stored = await inner.get(taskId);
    assert.equal(stored?.task.status.state, 'TASK_STATE_FAILED');
    assert.match(JSON.stringify(stored?.task.status.message), /storage became unavailable/);
    assert.deepEqual(
      (await inner.eventsAfter(taskId, 0)).map((e) => e.seq),
      [1, 2],
      'the final status follows the stored events',
    );
    assert.deepEqual(await inner.listRunning(), []);
    const seen = await watching;
    assert.equal(stateOf(seen.at(-1)), 'TASK_STATE_FAILED', 'the subscriber got the final event');
    assert.deepEqual(await parts.turns.settleLost(), [], 'settled once');
  });

  it('writes nothing after the final event when another process settled the task while this one was paused', async () => {
    const parts = partsOver(db, inner);
    let resume!: () => void;
    const paused = new Promise<void>((r) => (resume = r));
    script = async (turn) => {
      await turn.status('TASK_STATE_WORKING', 'started');
      await turn.stored();
      await paused;
      // Woken up: a burst of events, handed to storage at once (as a streaming model's chunks are).
      for (let i = 1; i <= 5; i++) {
        void turn.artifact({ artifactId: 'out', parts: [{ text: `chunk ${i}` }] }, { append: i > 1 }).catch(() => {});
      }
      await turn.status('TASK_STATE_COMPLETED', 'done').catch(() => {});
    };
    const stream = await parts.service.stream(text('pause'), LOCAL_PRINCIPAL);
    const items: unknown[] = [];
    const reading = (async () => {
      for await (const item of stream) items.push(item);
    })();
    const taskId = await (async () => {
      for (;;) {
        const first = items[0] as { payload: { task: Task } } | undefined;
        if (first && items.length >= 2) return first.payload.task.id;
        await new Promise((r) => setImmediate(r));
      }
    })();
    // The other process takes this one for dead and settles the task (as StrandedTasks does).
    const settled = await other.get(taskId);
    assert.ok(settled);
    const failed: Task = {
      ...settled.task,
      status: { state: 'TASK_STATE_FAILED', timestamp: new Date().toISOString() },
    };
    await other.append(
      taskId,
      {
        seq: settled.seq + 1,
        kind: 'status',
        event: { taskId, contextId: failed.contextId, status: failed.status },
      },
      failed,
    );
    resume();
    await reading;
    const log = await inner.eventsAfter(taskId, 0);
    assert.deepEqual(
      log.map((e) => e.seq),
      [1, 2],
      'nothing after the final event',
    );
    const stored = await inner.get(taskId);
    assert.equal(stored?.task.status.state, 'TASK_STATE_FAILED');
    assert.equal(stored?.task.artifacts, undefined, 'no artifact of the fenced-off turn');
    assert.equal(stateOf(items.at(-1)), 'TASK_STATE_FAILED', 'the stream ends with the stored final status');
  });
});
