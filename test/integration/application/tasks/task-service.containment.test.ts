/**
 * The task service contains every failure of a turn: a store that fails (the task row, an event,
 * a follow-up's snapshot) is answered to the caller, never left as an unhandled rejection, and the
 * service keeps working once storage does. Real SQLite repositories, with failures injected.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import type { Actor, ActorCatalog, Logger, TaskRepository } from '../../../../src/application/index.ts';
import { builtinActorsByModel, LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import { SessionService } from '../../../../src/application/sessions/session.service.ts';
import type { TaskService } from '../../../../src/application/tasks/task.service.ts';
import { buildTasks } from '../../../../src/main/composition/tasks.wiring.ts';
import {
  openDatabase,
  SqliteSessionRepository,
  SqliteTaskRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';

type Method = 'create' | 'append' | 'saveSnapshot';

/** The real repository, except that the next calls of `method` fail (from the `nth` one on). */
function faulty(inner: TaskRepository): {
  repo: TaskRepository;
  fail(method: Method, nth: number, times?: number): void;
  heal(): void;
} {
  let plan: { method: Method; nth: number; times: number } | undefined;
  let seen = 0;
  const wrap =
    (method: Method) =>
    (...args: unknown[]): Promise<void> => {
      if (plan?.method === method && ++seen >= plan.nth && plan.times-- > 0) {
        return Promise.reject(
          new AppError('UNAVAILABLE', 'Storage is unavailable: the disk is full', {
            details: { correlationId: 'injected' },
          }),
        );
      }
      return (inner[method] as (...a: unknown[]) => Promise<void>).apply(inner, args);
    };
  const repo: TaskRepository = Object.create(inner) as TaskRepository;
  repo.create = wrap('create');
  repo.append = wrap('append');
  repo.saveSnapshot = wrap('saveSnapshot');
  return {
    repo,
    fail(method, nth, times = Infinity) {
      plan = { method, nth, times };
      seen = 0;
    },
    heal() {
      plan = undefined;
    },
  };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};
const text = (t: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER' as const, parts: [{ text: t }], ...extra },
});

describe('TaskService containment', () => {
  let db: SqliteDatabase;
  let tasks: TaskService;
  let store: ReturnType<typeof faulty>;
  let observerBroken = false;
  const logs: Array<{ obj: any; msg?: string | undefined }> = [];
  const escaped: unknown[] = [];
  const onRejection = (reason: unknown): void => void escaped.push(reason);
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (obj, msg) => void logs.push({ obj, msg }),
    error: (obj, msg) => void logs.push({ obj, msg }),
  };

  before(async () => {
    db = await openDatabase({ file: ':memory:' });
    const inner = new SqliteTaskRepository(db);
    store = faulty(inner);
    const echo = builtinActorsByModel().get('echo');
    assert.ok(echo);
    // Messages starting "ask" get a task that waits for input (so a follow-up is accepted).
    const asker: Actor = {
      name: 'test/asker',
      description: 'asks once, then completes',
      handle: (turn) => turn.status(turn.isFollowUp ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_INPUT_REQUIRED', 'say more'),
    };
    const pick: Actor = {
      name: 'test/pick',
      description: 'echo or asker',
      handle: (turn) => (/^ask/.test(turn.task.history?.[0]?.parts[0]?.text ?? '') ? asker : echo).handle(turn),
    };
    const actors: ActorCatalog = {
      resolve: async () => pick,
      names: () => ['builtin/echo'],
      available: async () => ({ names: ['builtin/echo'], more: 0 }),
    };
    const sessions = new SessionService({
      sessions: new SqliteSessionRepository(db),
      tasks: inner,
      actors,
      defaultActor: 'builtin/echo',
    });
    // An event observer (push delivery's place) that fails once a test breaks it.
    const observer = {
      stored: (): void => {
        if (observerBroken) throw new Error('observer broke');
      },
    };
    tasks = buildTasks({ tasks: store.repo, sessions, actors, logger, observers: [observer] }).service;
  });
  after(async () => {
    await db.close();
  });
  beforeEach(() => {
    observerBroken = false;
    logs.length = 0;
    escaped.length = 0;
    process.on('unhandledRejection', onRejection);
  });
  afterEach(async () => {
    store.heal();
    await settle();
    process.off('unhandledRejection', onRejection);
    assert.deepEqual(escaped, [], 'no rejection reached the process');
  });

  it('answers a failed task row to the sender (blocking and streaming) and keeps working', async () => {
    store.fail('create', 1);
    await assert.rejects(tasks.send(text('one'), LOCAL_PRINCIPAL), /disk is full/);
    await assert.rejects(tasks.stream(text('two'), LOCAL_PRINCIPAL), /disk is full/);
    await settle();
    store.heal();
    const ok = await tasks.send(text('three'), LOCAL_PRINCIPAL);
    assert.ok('task' in ok && ok.task.status.state === 'TASK_STATE_COMPLETED');
    await settle();
    assert.equal(tasks.liveCount, 0, 'the failed tasks are not held in memory');
    assert.equal(
      logs.filter((l) => /storing the task failed/.test(l.msg ?? '')).length,
      0,
      'the store already logged it; the caller was answered',
    );
  });

  it('fails a blocking send whose events could not be stored, instead of reporting a state nobody can read back', async () => {
    store.fail('append', 2);
    await assert.rejects(tasks.send(text('events fail'), LOCAL_PRINCIPAL), /disk is full/);
    await settle();
    store.heal();
    const page = await tasks.list({}, LOCAL_PRINCIPAL);
    const failed = page.tasks.find((t) => t.history?.[0]?.parts[0]?.text === 'events fail');
    assert.ok(failed, 'the task row was stored');
    assert.notEqual(failed.status.state, 'TASK_STATE_COMPLETED', 'what GetTask reads is what was stored');
    const ok = await tasks.send(text('after'), LOCAL_PRINCIPAL);
    assert.ok('task' in ok && ok.task.status.state === 'TASK_STATE_COMPLETED');
  });

  it('ends a stream whose events could not be stored with the storage error, not silently or never', async () => {
    store.fail('append', 1);
    const items: unknown[] = [];
    await assert.rejects(async () => {
      for await (const item of await tasks.stream(text('stream fails'), LOCAL_PRINCIPAL)) items.push(item);
    }, /disk is full/);
    assert.equal(items.length, 1, 'the task itself, then the error');
  });

  it('answers a follow-up whose snapshot could not be stored, and forgets the unstored message', async () => {
    const first = await tasks.send(text('ask me'), LOCAL_PRINCIPAL);
    assert.ok('task' in first);
    assert.equal(first.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const id = first.task.id;
    await settle();
    store.fail('saveSnapshot', 1);
    await assert.rejects(tasks.send(text('again', { taskId: id }), LOCAL_PRINCIPAL), /disk is full/);
    store.heal();
    await settle();
    const got = await tasks.get(id, undefined, LOCAL_PRINCIPAL);
    assert.equal(
      got.history?.some((m) => m.parts[0]?.text === 'again'),
      false,
      'the unstored message is not reported',
    );
    assert.equal(got.status.state, 'TASK_STATE_INPUT_REQUIRED');
    // Once storage works, the same follow-up goes through.
    const done = await tasks.send(text('again', { taskId: id }), LOCAL_PRINCIPAL);
    assert.ok('task' in done && done.task.status.state === 'TASK_STATE_COMPLETED');
  });

  it('keeps a failing event observer (e.g. push delivery) from failing the task', async () => {
    observerBroken = true;
    const ok = await tasks.send(text('observed'), LOCAL_PRINCIPAL);
    assert.ok('task' in ok && ok.task.status.state === 'TASK_STATE_COMPLETED');
    assert.ok(logs.some((l) => /observer failed/.test(l.msg ?? '')));
  });
});
