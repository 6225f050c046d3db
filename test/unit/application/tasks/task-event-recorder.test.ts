/**
 * The task event recorder over a fake task store whose writes resolve when the test says so: the
 * store may finish writes in any order, but listeners see events strictly in sequence order,
 * each only once it and every event before it is stored; and an actor that runs ahead waits once
 * MAX_UNSTORED_EVENTS of its events are still unstored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger as logger, type TaskRepository } from '../../../../src/application/index.ts';
import type { Actor } from '../../../../src/application/ports/actor.port.ts';
import { LiveTasks, type LiveTask } from '../../../../src/application/tasks/live-tasks.service.ts';
import {
  MAX_UNSTORED_EVENTS,
  SNAPSHOT_EVERY_EVENTS,
  TaskEventRecorder,
} from '../../../../src/application/tasks/task-event.recorder.ts';
import { TurnRunner } from '../../../../src/application/tasks/turn-runner.service.ts';
import type { Message, TaskEvent } from '../../../../src/domain/a2a.model.ts';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
};

/** A store whose appends stay pending until `resolve(seq)` / `fail(seq)`. */
function heldStore() {
  const pending = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  const appended: number[] = [];
  const repo = {
    append: (_taskId: string, ev: TaskEvent) =>
      new Promise<void>((resolve, reject) => {
        appended.push(ev.seq);
        pending.set(ev.seq, { resolve, reject });
      }),
    endTurn: async () => {},
    get: async () => undefined,
  } as unknown as TaskRepository;
  return {
    repo,
    appended,
    resolve(seq: number) {
      pending.get(seq)?.resolve();
      pending.delete(seq);
    },
    fail(seq: number, err: unknown) {
      pending.get(seq)?.reject(err);
      pending.delete(seq);
    },
    resolveAll() {
      for (const seq of [...pending.keys()]) this.resolve(seq);
    },
    get pendingCount() {
      return pending.size;
    },
  };
}

function setup() {
  const store = heldStore();
  const live = new LiveTasks(store.repo, logger);
  const recorder = new TaskEventRecorder({
    tasks: store.repo,
    sessions: { recordActivity: async () => {} },
    logger,
    now: () => new Date('2026-01-01T00:00:00.000Z'),
  });
  const task = live.register({ id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_SUBMITTED' } }, 'alice', 0);
  const delivered: number[] = [];
  task.listeners.add((item) => delivered.push(item.seq));
  return { store, live, recorder, task, delivered };
}

const working = (recorder: TaskEventRecorder, task: LiveTask) => recorder.status(task, 'TASK_STATE_WORKING');

describe('TaskEventRecorder ordering', () => {
  it('hands every event to the store at once, in sequence order', async () => {
    const { store, recorder, task } = setup();
    for (let i = 0; i < 5; i++) void working(recorder, task).catch(() => {});
    assert.deepEqual(store.appended, [1, 2, 3, 4, 5], 'storing does not wait for earlier writes');
    store.resolveAll();
    await settle();
  });

  it('delivers in sequence order even when the store finishes the writes in reverse', async () => {
    const { store, recorder, task, delivered } = setup();
    for (let i = 0; i < 5; i++) void working(recorder, task);
    for (const seq of [5, 4, 3, 2]) store.resolve(seq);
    await settle();
    assert.deepEqual(delivered, [], 'nothing is delivered before event 1 is stored');
    store.resolve(1);
    await settle();
    assert.deepEqual(delivered, [1, 2, 3, 4, 5]);
  });

  it('delivers an event only once it is stored: a slow write holds back the events after it', async () => {
    const { store, recorder, task, delivered } = setup();
    for (let i = 0; i < 4; i++) void working(recorder, task).catch(() => {});
    store.resolve(1);
    store.resolve(3);
    store.resolve(4);
    await settle();
    assert.deepEqual(delivered, [1]);
    store.resolve(2);
    await settle();
    assert.deepEqual(delivered, [1, 2, 3, 4]);
  });

  it('after a failed write delivers nothing more, and the actor learns of it at its next event', async () => {
    const { store, recorder, task, delivered } = setup();
    const first = working(recorder, task);
    const second = working(recorder, task);
    first.catch(() => {});
    second.catch(() => {});
    const boom = new Error('disk full');
    store.fail(1, boom);
    store.resolve(2);
    await settle();
    assert.deepEqual(delivered, []);
    assert.equal(task.failure, boom);
    await assert.rejects(recorder.paced(task, working(recorder, task)), (err) => err === boom);
  });
});

describe('TaskEventRecorder back-pressure', () => {
  it(`lets an actor run ${MAX_UNSTORED_EVENTS - 1} events ahead of the store, then waits until they are stored`, async () => {
    const { store, live, recorder, task, delivered } = setup();
    const turns = new TurnRunner({ tasks: store.repo, live, recorder, logger });
    const total = MAX_UNSTORED_EVENTS + 10;
    let returned = 0;
    let finished = false;
    const actor: Actor = {
      name: 'test/burst',
      description: 'emits a burst of progress events',
      handle: async (turn) => {
        for (let i = 0; i < total; i++) {
          await turn.status('TASK_STATE_WORKING');
          returned++;
        }
        finished = true;
      },
    };
    const message: Message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'go' }] };
    turns.start(task, actor, message, false);
    await settle();
    assert.equal(store.pendingCount, MAX_UNSTORED_EVENTS, 'the actor stopped with this many events unstored');
    assert.equal(returned, MAX_UNSTORED_EVENTS - 1, 'the event that reached the limit has not returned');
    assert.deepEqual(delivered, []);
    // Storing the backlog releases the actor; it runs on to the end.
    for (let round = 0; round < 10 && (!finished || store.pendingCount > 0); round++) {
      store.resolveAll();
      await settle();
    }
    assert.equal(finished, true);
    assert.equal(returned, total);
    assert.deepEqual(
      delivered,
      Array.from({ length: total }, (_, i) => i + 1),
    );
  });
});

describe('ActorTurn.stored', () => {
  it("waits for the task's row (a turn may start before it is written), and never rejects", async () => {
    const { store, live, recorder, task } = setup();
    let storeRow!: () => void;
    task.chain = new Promise<void>((resolve) => {
      storeRow = resolve;
    });
    task.chain.catch(() => {});
    const turns = new TurnRunner({ tasks: store.repo, live, recorder, logger });
    const seen: string[] = [];
    const actor: Actor = {
      name: 'test/transcript',
      description: 'writes something that references its task',
      handle: async (turn) => {
        seen.push('started');
        await turn.stored();
        seen.push('stored');
      },
    };
    turns.start(task, actor, { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'go' }] }, false);
    await settle();
    assert.deepEqual(seen, ['started'], 'the turn runs, but what references the task waits for its row');
    storeRow();
    await settle();
    assert.deepEqual(seen, ['started', 'stored']);

    const second = setup();
    second.task.chain = Promise.reject(new Error('disk full'));
    second.task.chain.catch(() => {});
    let resolved = false;
    const turns2 = new TurnRunner({ tasks: second.store.repo, live: second.live, recorder: second.recorder, logger });
    turns2.start(
      second.task,
      { name: 'test/t', description: '', handle: async (turn) => void (await turn.stored(), (resolved = true)) },
      { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'go' }] },
      false,
    );
    await settle();
    assert.equal(resolved, true, "a failed store is the runner's to report, not a rejection here");
  });
});

describe('TaskEventRecorder failures', () => {
  it('a store failure reaches the actor and leaves no unhandled rejection, even when the actor takes its time', async () => {
    const escaped: unknown[] = [];
    const onRejection = (reason: unknown): void => void escaped.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const { store, live, recorder, task } = setup();
      const turns = new TurnRunner({ tasks: store.repo, live, recorder, logger });
      const boom = new Error('disk full');
      let seen: unknown;
      const actor: Actor = {
        name: 'test/slow',
        description: 'keeps reporting after a failed store, then waits before giving up',
        handle: async (turn) => {
          await turn.status('TASK_STATE_WORKING');
          store.fail(1, boom);
          await new Promise((r) => setImmediate(r));
          try {
            await turn.status('TASK_STATE_WORKING');
          } catch (err) {
            seen = err;
          }
          // Not microtasks only: an unhandled rejection would be detected here.
          await new Promise((r) => setImmediate(r));
          await new Promise((r) => setImmediate(r));
        },
      };
      turns.start(task, actor, { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'go' }] }, false);
      await settle();
      store.resolveAll();
      await settle();
      assert.equal(seen, boom, 'the actor learns of the failure at its next event');
      assert.equal(task.running, 0, 'the turn ended');
      assert.deepEqual(escaped, []);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});

describe('TaskEventRecorder serialises an event once', () => {
  it('stores the text its listeners get as the item’s JSON', async () => {
    const stored: string[] = [];
    const { store, recorder, task } = setup();
    const append = store.repo.append.bind(store.repo);
    store.repo.append = (taskId, ev, snapshot, eventJson) => {
      stored.push(eventJson ?? '(none)');
      return append(taskId, ev, snapshot, eventJson);
    };
    const items: { json?: string; payload: unknown }[] = [];
    task.listeners.add((item) => items.push(item));
    void recorder.status(task, 'TASK_STATE_WORKING', 'thinking');
    void recorder.artifact(task, { artifactId: 'a1', parts: [{ text: 'x' }] }, { lastChunk: true });
    store.resolveAll();
    await settle();
    assert.equal(stored.length, 2);
    assert.equal(items.length, 2);
    assert.equal(items[0]?.json, `{"statusUpdate":${stored[0]}}`);
    assert.equal(items[1]?.json, `{"artifactUpdate":${stored[1]}}`);
    for (const item of items) assert.deepEqual(JSON.parse(item.json ?? ''), item.payload, 'the JSON is the payload');
  });
});

describe('TaskEventRecorder rewrites a running task’s snapshot every so many events', () => {
  it('stores the snapshot with a settled status, and with a status message once enough events followed the last', async () => {
    const { store, recorder, task } = setup();
    const withSnapshot: number[] = [];
    const activity: string[] = [];
    const append = store.repo.append.bind(store.repo);
    store.repo.append = (taskId, ev, snapshot, eventJson) => {
      if (snapshot) {
        withSnapshot.push(ev.seq);
        // The snapshot holds every message recorded so far.
        assert.equal(snapshot.history?.length, messagesUpTo.get(ev.seq));
      }
      return append(taskId, ev, snapshot, eventJson);
    };
    (recorder as unknown as { deps: { sessions: unknown } }).deps.sessions = {
      recordActivity: async (_c: string, at: string) => void activity.push(at),
    };
    const n = 2 * SNAPSHOT_EVERY_EVENTS + 5;
    const messagesUpTo = new Map<number, number>();
    let messages = 0;
    for (let i = 1; i <= n; i++) {
      // Every tenth event is a plain progress state (no message): it counts, but never rewrites.
      if (i % 10 !== 0) messages++;
      messagesUpTo.set(i, messages);
      void recorder.status(task, 'TASK_STATE_WORKING', i % 10 === 0 ? undefined : `step ${i}`);
    }
    messagesUpTo.set(n + 1, ++messages);
    void recorder.status(task, 'TASK_STATE_COMPLETED', 'done');
    store.resolveAll();
    await settle();
    const rewrites = withSnapshot.slice(0, -1);
    assert.equal(withSnapshot.at(-1), n + 1, 'the settled status stores the snapshot');
    assert.ok(
      rewrites.length >= 2 && rewrites.length <= 3,
      `a few rewrites, not one per message: ${rewrites.join(',')}`,
    );
    for (const [i, seq] of rewrites.entries()) {
      const since = seq - (rewrites[i - 1] ?? 0);
      assert.ok(
        since >= SNAPSHOT_EVERY_EVENTS && since <= SNAPSHOT_EVERY_EVENTS + 1,
        `rewrite at ${seq} after ${since}`,
      );
    }
    assert.equal(activity.length, messages, "the session's activity still moves with every message");
  });
});
