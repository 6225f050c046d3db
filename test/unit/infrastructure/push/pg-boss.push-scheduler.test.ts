/**
 * Push deliveries across two server instances on one PostgreSQL database (PgBossPushScheduler):
 * each event reaches a real local webhook exactly once, in order per config, whichever instance
 * queued it and whichever drains it; a failing webhook is retried with backoff; an instance that
 * dies mid-delivery loses nothing (its job is retried by the other). Events are stored as a server
 * stores them (PgTaskRepository.append queues their deliveries in the same statement), then handed
 * to the notifier.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PushNotifier } from '../../../../src/application/push/push-notifier.service.ts';
import { silentLogger, type StoredPushConfig, type WebhookSender } from '../../../../src/application/index.ts';
import type { Task, TaskEvent } from '../../../../src/domain/a2a.model.ts';
import { EgressGuard, HttpWebhookSender } from '../../../../src/infrastructure/index.ts';
import { openPgDatabase, type PgDatabase } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';
import { PgPushOutboxRepository } from '../../../../src/infrastructure/persistence/postgres/pg-push-outbox.repository.ts';
import { PgTaskRepository } from '../../../../src/infrastructure/persistence/postgres/pg-task.repository.ts';
import { PgBossPushScheduler } from '../../../../src/infrastructure/push/pg-boss.push-scheduler.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../../../support/postgres.ts';
import { taskRow } from '../../../support/task-rows.ts';

interface Instance {
  name: string;
  db: PgDatabase;
  scheduler: PgBossPushScheduler;
  notifier: PushNotifier;
  tasks: PgTaskRepository;
}

const taskOf = (id: string): Task => ({ id, contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } });
const event = (taskId: string, seq: number): TaskEvent => ({
  seq,
  kind: 'status',
  event: { taskId, contextId: 'c1', status: { state: 'TASK_STATE_WORKING' }, metadata: { seq } },
});

/** Stores an event on an instance (its deliveries queued with it), then hands it to the instance's notifier. */
async function emit(i: Instance, taskId: string, seq: number): Promise<void> {
  const ev = event(taskId, seq);
  await i.tasks.append(taskId, ev);
  i.notifier.notify(taskOf(taskId), { seq, payload: { statusUpdate: ev.event } } as never);
}

/** Up to ~30 s of polling (never a timed assertion: it only bounds a wait that should end much sooner). */
async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('push deliveries across two instances (pg-boss)', { skip: pgSkip() }, () => {
  let made: PgTestDatabase;
  let hook: Server;
  let base = '';
  /** Deliveries answered 200, per "task/config": the seqs in arrival order. */
  const delivered = new Map<string, number[]>();
  /** Every request per "task/config/seq" (answered or not). */
  const attempts = new Map<string, number>();
  /** Requests in flight per target, and the most ever seen at once. */
  const inFlight = new Map<string, number>();
  let maxInFlight = 0;
  /** Configs answered 503 this many more times. */
  const failing = new Map<string, number>();
  /** A request never answered (a hung instance): "task/config/seq". */
  let hold: string | undefined;
  const held: ServerResponse[] = [];
  /** Which instance is in a webhook call right now, per target. */
  const caller = new Map<string, string>();
  const configs: Record<string, StoredPushConfig[]> = {};
  const instances: Instance[] = [];
  /** The instance the third test kills. */
  let deadName = '';

  before(async () => {
    made = await createPgDatabase();
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const target = (req.url ?? '').slice(1);
        const seq = (JSON.parse(body) as { statusUpdate: { metadata: { seq: number } } }).statusUpdate.metadata.seq;
        const id = `${target}/${seq}`;
        attempts.set(id, (attempts.get(id) ?? 0) + 1);
        const n = (inFlight.get(target) ?? 0) + 1;
        inFlight.set(target, n);
        maxInFlight = Math.max(maxInFlight, n);
        const done = (status: number): void => {
          inFlight.set(target, (inFlight.get(target) ?? 1) - 1);
          if (status === 200) delivered.set(target, [...(delivered.get(target) ?? []), seq]);
          res.statusCode = status;
          res.end();
        };
        if (hold === id) {
          hold = undefined;
          held.push(res);
          return;
        }
        const fails = failing.get(target) ?? 0;
        if (fails > 0) failing.set(target, fails - 1);
        // A little latency, so that two drains of one target would overlap if they could.
        setTimeout(() => done(fails > 0 ? 503 : 200), 5);
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
    for (const name of ['a', 'b']) {
      const applicationName = `ca-push-${name}`;
      const db = await openPgDatabase({ url: made.url, applicationName });
      const scheduler = await PgBossPushScheduler.open({
        url: made.url,
        logger: silentLogger,
        applicationName,
        pollingIntervalSeconds: 0.5,
        monitorIntervalSeconds: 1,
        expireSeconds: 2,
        busyRetryMs: 100,
        runMs: 2000,
      });
      const http = new HttpWebhookSender({ guard: new EgressGuard({ allow: ['127.0.0.1'] }) });
      const sender: WebhookSender = {
        send: (url, headers, body, signal) => {
          caller.set(new URL(url).pathname.slice(1), name);
          return http.send(url, headers, body, signal);
        },
      };
      const notifier = new PushNotifier(
        async (taskId) => configs[taskId] ?? [],
        new PgPushOutboxRepository(db, `runner-${name}`),
        sender,
        silentLogger,
        { backoffMs: [50, 100], timeoutMs: 60_000, scheduler },
      );
      instances.push({
        name,
        db,
        scheduler,
        notifier,
        tasks: new PgTaskRepository(db, { runnerId: `runner-${name}` }),
      });
    }
  });

  after(async () => {
    for (const r of held) r.destroy();
    await Promise.allSettled(instances.map((i) => i.notifier.stop()));
    await Promise.allSettled(instances.map((i) => i.db.close()));
    await new Promise((r) => hook.close(r));
    await made?.drop();
  });

  async function addTask(id: string, configIds: string[]): Promise<void> {
    const [first] = instances;
    await first!.db.kysely.insertInto('tasks').values(taskRow(id)).execute();
    configs[id] = configIds.map((c) => ({ id: c, taskId: id, url: `${base}/${id}/${c}` }));
    for (const c of configs[id]) {
      await first!.db.kysely
        .insertInto('push_configs')
        .values({ task_id: id, id: c.id, config: JSON.stringify(c) })
        .execute();
    }
  }

  /** Ends every database connection of an instance (its pools reconnect when asked; a lock held on one is gone). */
  async function dropConnections(name: string): Promise<void> {
    const admin = new pg.Client({ connectionString: made.url });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
        `ca-push-${name}`,
      ]);
    } finally {
      await admin.end();
    }
  }

  const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
  const allDelivered = (targets: string[], n: number) => () =>
    targets.every((t) => (delivered.get(t)?.length ?? 0) >= n) ? true : undefined;

  it('delivers every event once, in order per config, whichever instance queued and drains it', async () => {
    const [a, b] = instances;
    await addTask('t1', ['x', 'y']);
    await addTask('t2', ['x', 'y']);
    const n = 12;
    for (const seq of range(n)) {
      await emit(a!, 't1', seq);
      await emit(b!, 't2', seq);
    }
    const targets = ['t1/x', 't1/y', 't2/x', 't2/y'];
    await until('every delivery', allDelivered(targets, n));
    for (const t of targets) assert.deepEqual(delivered.get(t), range(n), `${t}: each event once, in order`);
    assert.equal(maxInFlight, 1, 'never two attempts at one webhook target at once');
  });

  it('retries a failing webhook with backoff and then delivers each event once', async () => {
    const [a, b] = instances;
    await addTask('t3', ['flaky']);
    failing.set('t3/flaky', 2);
    for (const seq of range(3)) await emit(a!, 't3', seq);
    await until('the flaky deliveries', allDelivered(['t3/flaky'], 3));
    assert.deepEqual(delivered.get('t3/flaky'), [1, 2, 3]);
    assert.equal(attempts.get('t3/flaky/1'), 3, 'two failures, then delivered');
    assert.equal(attempts.get('t3/flaky/2'), 1, 'held back behind the retried event, then sent once');
    assert.equal(a!.notifier.failures('flaky') + b!.notifier.failures('flaky'), 2);
  });

  it('loses nothing when the instance delivering a target dies mid-delivery: the other takes its job over', async () => {
    const [a] = instances;
    await addTask('t4', ['k']);
    hold = 't4/k/3';
    for (const seq of range(6)) await emit(a!, 't4', seq);
    await until('the held delivery', () => (held.length === 1 ? true : undefined));
    // Everything is queued before the instance dies (3 is in flight; 4..6 wait behind it).
    await until('the queued entries', async () => {
      const r = await a!.db.kysely
        .selectFrom('push_outbox')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('task_id', '=', 't4')
        .executeTakeFirstOrThrow();
      return r.n === 4 ? true : undefined;
    });
    const dead = instances.find((i) => i.name === caller.get('t4/k'))!;
    deadName = dead.name;
    // The instance dies: it takes no more jobs, and its connections (with the target's lock) are gone.
    await dead.scheduler.stopFetching();
    await dropConnections(dead.name);
    await until('the deliveries after the take-over', allDelivered(['t4/k'], 6));
    assert.deepEqual(delivered.get('t4/k'), range(6), 'every event once, in order (3 by the survivor)');
    assert.equal(attempts.get('t4/k/3'), 2, 'the dead instance’s attempt (never answered) and the survivor’s');
    assert.notEqual(caller.get('t4/k'), dead.name, 'the survivor delivered the rest');
  });

  it('retries the job of an instance that died with nothing else queued for its target (the job expires)', async () => {
    const survivor = instances.find((i) => i.name !== deadName)!;
    await addTask('t5', ['k']);
    hold = 't5/k/1';
    // One event, one wake, one job: only that job's retry can bring the delivery back.
    await emit(survivor, 't5', 1);
    await until('the held delivery', () => (held.length === 2 ? true : undefined));
    assert.equal(caller.get('t5/k'), survivor.name, 'only one instance is left to take it');
    // This time the instance delivering is not killed: its connections are, mid-attempt, so the
    // job's lock is lost and the job ends unanswered; pg-boss retries it.
    await dropConnections(survivor.name);
    await until('the delivery after the retry', allDelivered(['t5/k'], 1));
    assert.deepEqual(delivered.get('t5/k'), [1]);
  });
});
