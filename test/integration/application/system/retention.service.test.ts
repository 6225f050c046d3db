import { sqliteOf } from '../../../support/sqlite-of.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  LOCAL_PRINCIPAL,
  RetentionService,
  type Logger,
  type TaskRepository,
} from '../../../../src/application/index.ts';
import { SqliteSessionRepository, SqliteTaskRepository } from '../../../../src/infrastructure/index.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import { InMemoryClientTransport } from '../../../../src/protocol/server/in-memory.transport.ts';
import { tempDir } from '../../../support/harness.ts';

type TaskLike = { id: string; contextId: string; status: { state: string } };
const DAY = 24 * 60 * 60_000;

describe('retention', () => {
  let app: App;
  let rpc: InMemoryClientTransport;
  let tasks: SqliteTaskRepository;
  let sessions: SqliteSessionRepository;
  const errors: unknown[] = [];
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (o) => void errors.push(o) };

  beforeEach(async () => {
    app = await buildApp({ dataDir: tempDir(), inMemory: true, card: { endpoint: 'memory://', auth: 'none' } });
    rpc = new InMemoryClientTransport(app.dispatcher, () => ({}), LOCAL_PRINCIPAL, '1.0');
    tasks = new SqliteTaskRepository(sqliteOf(app));
    sessions = new SqliteSessionRepository(sqliteOf(app));
    errors.length = 0;
  });
  afterEach(async () => app.close());

  const send = async (text: string, extra: Record<string, unknown> = {}): Promise<TaskLike> =>
    (
      (await rpc.request('SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra },
      })) as { task: TaskLike }
    ).task;
  const service = (
    daysLater: number,
    isLive: (id: string) => boolean = (id) => app.live.has(id),
    repo: TaskRepository = tasks,
  ) =>
    new RetentionService({ tasks: repo, sessions, isLive, logger, now: () => new Date(Date.now() + daysLater * DAY) });
  const count = (sql: string, ...args: unknown[]): number =>
    (
      sqliteOf(app)
        .sqlite.prepare(sql)
        .get(...args) as { n: number }
    ).n;
  const list = async (params: Record<string, unknown> = {}) =>
    (await rpc.request('ListTasks', params)) as { tasks: TaskLike[]; totalSize: number };

  it('deletes finished tasks, their events and idle sessions past the age; keeps unfinished work and its session', async () => {
    const a = await send('one');
    const b = await send('two', { contextId: a.contextId });
    const sessionId = (
      (await rpc.request('_cleveragents/session/create', { actor: 'builtin/conformance' })) as { id: string }
    ).id;
    const working = await send('stays working', { contextId: sessionId });
    assert.equal(working.status.state, 'TASK_STATE_WORKING');
    assert.ok(count('SELECT count(*) AS n FROM task_events WHERE task_id = ?', a.id) > 0, 'a has events');

    assert.deepEqual(
      await service(0).sweep({ maxAgeDays: 30 }),
      { tasksDeleted: 0, sessionsDeleted: 0 },
      'nothing is old yet',
    );
    const r = await service(31).sweep({ maxAgeDays: 30 });
    assert.deepEqual(r, { tasksDeleted: 2, sessionsDeleted: 1 });

    assert.equal(await tasks.get(a.id), undefined);
    assert.equal(await tasks.get(b.id), undefined);
    assert.equal(
      count('SELECT count(*) AS n FROM task_events WHERE task_id IN (?, ?)', a.id, b.id),
      0,
      'event logs deleted',
    );
    assert.equal(await sessions.get(a.contextId), undefined, 'the idle empty session went');
    assert.ok(await tasks.get(working.id), 'a non-terminal task stays');
    assert.ok(await sessions.get(sessionId), 'its session stays');
    // The maintained counts behind totalSize still match the rows.
    const all = await list();
    assert.equal(all.totalSize, 1);
    assert.equal(all.tasks.length, 1);
    assert.equal((await list({ contextId: a.contextId })).totalSize, 0);
    assert.equal((await list({ contextId: sessionId })).totalSize, 1);
    await rpc.request('CancelTask', { id: working.id });
  });

  it('keeps only the newest tasks beyond a count, and the counts stay right', async () => {
    const made: TaskLike[] = [];
    const first = await send('t0');
    made.push(first);
    for (let i = 1; i < 5; i++) made.push(await send(`t${i}`, { contextId: first.contextId }));
    const r = await service(0).sweep({ maxTasks: 2 });
    assert.equal(r.tasksDeleted, 3);
    const left = await list();
    assert.equal(left.totalSize, 2);
    assert.deepEqual(
      new Set(left.tasks.map((t) => t.id)),
      new Set(made.slice(3).map((t) => t.id)),
      'the newest two are kept',
    );
    assert.equal((await list({ contextId: first.contextId })).totalSize, 2);
    assert.equal(count('SELECT count(*) AS n FROM tasks'), 2);
  });

  it("never deletes a live task or a plan's tasks, nor the plan's session", async () => {
    const live = await send('held by a subscriber');
    const planTask = await send('a plan turn');
    const doc = JSON.stringify({ id: 'plan-1', contextId: planTask.contextId });
    const at = new Date().toISOString();
    sqliteOf(app)
      .sqlite.prepare(
        'INSERT INTO plans (id, owner, action, phase, state, created_at, updated_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run('plan-1', 'local', 'builtin/replace', 'strategize', 'complete', at, at, doc);
    const r = await service(31, (id) => id === live.id).sweep({ maxAgeDays: 30, maxTasks: 1 });
    assert.equal(r.tasksDeleted, 0);
    assert.ok(await tasks.get(live.id));
    assert.ok(await tasks.get(planTask.id));
    assert.ok(await sessions.get(planTask.contextId), "the plan's session stays");
    // Once the plan is gone its tasks may go.
    sqliteOf(app).sqlite.prepare('DELETE FROM plans WHERE id = ?').run('plan-1');
    assert.equal((await service(31, (id) => id === live.id).sweep({ maxAgeDays: 30 })).tasksDeleted, 1);
  });

  it('does nothing with retention off', async () => {
    await send('kept');
    assert.deepEqual(await service(10_000).sweep({}), { tasksDeleted: 0, sessionsDeleted: 0 });
  });

  it('a failing sweep is logged and contained, and the next one works', async () => {
    await send('x');
    let fail = true;
    const flaky: TaskRepository = Object.create(tasks, {
      deleteExpired: {
        value: (e: Parameters<TaskRepository['deleteExpired']>[0]) =>
          fail ? Promise.reject(new Error('disk I/O error')) : tasks.deleteExpired(e),
      },
    }) as TaskRepository;
    const svc = service(31, () => false, flaky);
    assert.equal(await svc.sweepContained({ maxAgeDays: 30 }), undefined);
    assert.equal(errors.length, 1);
    fail = false;
    assert.equal((await svc.sweepContained({ maxAgeDays: 30 }))?.tasksDeleted, 1);
  });

  it('uses the partial index for the oldest finished tasks', () => {
    const plan = sqliteOf(app)
      .sqlite.prepare(
        "EXPLAIN QUERY PLAN SELECT id FROM tasks WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED') AND updated_at < ? ORDER BY updated_at, id LIMIT 10",
      )
      .all('2030-01-01T00:00:00.000Z') as Array<{ detail: string }>;
    assert.match(plan.map((p) => p.detail).join('\n'), /tasks_terminal_updated/);
  });
});
