/**
 * Several `agents serve` instances on one PostgreSQL database (issue #12): any instance answers any
 * request. A client streaming from B sees the events of a task that A runs, in order, with no gap
 * and no duplicate (checked against the event log); a cancel sent to B stops A's turn at once; when
 * A is killed mid-turn, B settles its task within the lease; a bounded load spread across three
 * instances loses and duplicates no event. Issue #40: a database outage mid-turn leaves no task
 * working and every subscriber gets the truth; an instance paused past its lease writes nothing
 * after the final event; a webhook's deliveries survive the death of the instance that queued them.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { readSse } from '../../src/protocol/client/sse.ts';
import { startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.ts';
import { createPgDatabase, PG_ADMIN_URL, pgSkip, type PgTestDatabase } from '../support/postgres.ts';

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' };

interface SseEvent {
  id: number;
  data: any;
}

/** Posts a streaming JSON-RPC call and yields its SSE events as they arrive. */
async function* sse(
  base: string,
  method: string,
  params: unknown,
  extra: Record<string, string> = {},
): AsyncGenerator<SseEvent, void> {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { ...headers, accept: 'text/event-stream', ...extra },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  assert.equal(res.status, 200);
  assert.ok(res.body);
  for await (const ev of readSse(res.body)) yield { id: Number(ev.id ?? -1), data: JSON.parse(ev.data) };
}

async function rpc(base: string, method: string, params: unknown): Promise<any> {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const json: any = await res.json();
  if (json.error) throw new Error(`${method}: ${JSON.stringify(json.error)}`);
  return json.result;
}

/** The task id of a stream's first event (its task snapshot). */
function taskOf(first: IteratorResult<SseEvent, void>): string {
  assert.ok(!first.done && first.value, 'the stream sent its task first');
  return String(first.value.data.result.task.id);
}

const stateOf = (e: SseEvent): string | undefined =>
  e.data.result?.statusUpdate?.status?.state ?? e.data.result?.task?.status?.state;
const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

/** Reads a stream until its terminal event (or its end); the first event's task id comes along. */
async function collect(events: AsyncGenerator<SseEvent>): Promise<{ taskId: string; events: SseEvent[] }> {
  const out: SseEvent[] = [];
  let taskId = '';
  for await (const e of events) {
    out.push(e);
    taskId ||= e.data.result?.task?.id ?? e.data.result?.statusUpdate?.taskId ?? '';
    if (TERMINAL.has(stateOf(e) ?? '')) break;
  }
  return { taskId, events: out };
}

const message = (messageId: string, text = 'work on it') => ({
  message: { messageId, role: 'ROLE_USER', parts: [{ text }] },
});

interface Cluster {
  db: PgTestDatabase;
  dataDir: string;
  instances: HttpServerProcess[];
  log(taskId: string): Promise<Array<{ seq: number; kind: string; payload: unknown }>>;
  close(): Promise<void>;
}

/** Starts `n` instances on one fresh database, sharing one data directory (the sandboxes' volume). */
async function cluster(n: number, env: NodeJS.ProcessEnv): Promise<Cluster> {
  const db = await createPgDatabase('ca_multi');
  const dataDir = tempDir('ca-multi-');
  const instances: HttpServerProcess[] = [];
  const common = {
    ...process.env,
    CLEVERAGENTS_DATABASE_URL: db.url,
    CLEVERAGENTS_RUNNER_LEASE_MS: '1500',
    ...env,
  };
  // The first instance migrates the database; the others then start together.
  instances.push(await startHttpServer({ dataDir, defaultActor: 'builtin/conformance', env: common }));
  instances.push(
    ...(await Promise.all(
      Array.from({ length: n - 1 }, () =>
        startHttpServer({ dataDir, defaultActor: 'builtin/conformance', env: common }),
      ),
    )),
  );
  // Named, so that a simulated outage (which ends the instances' connections) spares it.
  const client = new pg.Client({ connectionString: db.url, application_name: 'ca-test-log' });
  await client.connect();
  return {
    db,
    dataDir,
    instances,
    async log(taskId) {
      const r = await client.query<{ seq: number; kind: string; payload: string }>(
        'select seq, kind, payload from task_events where task_id = $1 order by seq',
        [taskId],
      );
      return r.rows.map((row) => ({ seq: row.seq, kind: row.kind, payload: JSON.parse(row.payload) as unknown }));
    },
    async close() {
      await client.end().catch(() => {});
      await Promise.all(instances.map((i) => i.stop().catch(() => null)));
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The events a subscriber got after its snapshot, as (seq, payload) — to compare with the log. */
function afterSnapshot(events: SseEvent[]): Array<{ seq: number; update: unknown }> {
  return events
    .filter((e) => e.data.result?.statusUpdate || e.data.result?.artifactUpdate)
    .map((e) => ({ seq: e.id, update: e.data.result.statusUpdate ?? e.data.result.artifactUpdate }));
}

describe('several instances on one PostgreSQL database', { skip: pgSkip() }, () => {
  describe('streaming and load (three instances)', () => {
    let c: Cluster;
    before(async () => {
      // Not a test of leases: long enough that an instance busy with the load (its renewals
      // waiting for a pooled connection on a loaded machine) is not taken for dead.
      c = await cluster(3, { CLEVERAGENTS_CONFORMANCE_STEP_MS: '150', CLEVERAGENTS_RUNNER_LEASE_MS: '4000' });
    });
    after(() => c?.close());

    it('a client of B receives the events of a task running on A in order, with no gap and no duplicate', async () => {
      const [a, b] = c.instances as [HttpServerProcess, HttpServerProcess];
      const started = sse(a.baseUrl, 'SendStreamingMessage', message('tck-long-running-1'));
      const first = await started.next();
      const taskId = taskOf(first);
      const onB = collect(sse(b.baseUrl, 'SubscribeToTask', { id: taskId }));
      const onA = collect(started);
      const [fromB, fromA] = await Promise.all([onB, onA]);
      assert.equal(stateOf(fromB.events.at(-1)!), 'TASK_STATE_COMPLETED');
      const log = await c.log(taskId);
      const seen = afterSnapshot(fromB.events);
      const snapshotSeq = fromB.events[0]!.id;
      assert.ok(seen.length >= 3, `B saw ${seen.length} events live`);
      // Exactly the logged events after the snapshot B started from, in order.
      assert.deepEqual(
        seen.map((e) => e.seq),
        log.filter((e) => e.seq > snapshotSeq).map((e) => e.seq),
      );
      for (const e of seen) assert.deepEqual(e.update, log.find((l) => l.seq === e.seq)?.payload);
      // A's own client got the whole log too (after the task it was sent first).
      assert.ok(!first.done);
      assert.deepEqual(
        afterSnapshot(fromA.events).map((e) => e.seq),
        log.filter((e) => e.seq > first.value.id).map((e) => e.seq),
      );
      // And GetTask on the third instance reads the same final task.
      const got = await rpc(c.instances[2]!.baseUrl, 'GetTask', { id: taskId });
      assert.equal(got.status.state, 'TASK_STATE_COMPLETED');
    });

    it('the same messageId sent to two instances at once starts one task', async () => {
      const [a, b] = c.instances as [HttpServerProcess, HttpServerProcess];
      const m = message('tck-complete-task-idem', 'once only');
      const [x, y] = await Promise.all([rpc(a.baseUrl, 'SendMessage', m), rpc(b.baseUrl, 'SendMessage', m)]);
      assert.equal(x.task.id, y.task.id);
    });

    it('a bounded load across three instances loses and duplicates no event', async () => {
      const N = 18;
      const runs = await Promise.all(
        Array.from({ length: N }, async (_, i) => {
          const home = c.instances[i % 3]!;
          const other = c.instances[(i + 1) % 3]!;
          const started = sse(home.baseUrl, 'SendStreamingMessage', message(`tck-long-running-load-${i}`));
          const first = await started.next();
          const taskId = taskOf(first);
          const [watched, own] = await Promise.all([
            collect(sse(other.baseUrl, 'SubscribeToTask', { id: taskId })),
            collect(started),
          ]);
          return { taskId, watched, own };
        }),
      );
      for (const { taskId, watched } of runs) {
        const log = await c.log(taskId);
        assert.deepEqual(
          log.map((e) => e.seq),
          log.map((_, i) => i + 1),
          'the log itself has no gap',
        );
        const seen = afterSnapshot(watched.events).map((e) => e.seq);
        assert.deepEqual(seen, [...new Set(seen)], 'no duplicate');
        assert.deepEqual(
          seen,
          log.filter((e) => e.seq > watched.events[0]!.id).map((e) => e.seq),
          'no gap',
        );
        assert.equal(stateOf(watched.events.at(-1)!), 'TASK_STATE_COMPLETED');
      }
    });
  });

  describe('cancel and failure (two instances, turns that would run a minute)', () => {
    let c: Cluster;
    before(async () => {
      c = await cluster(2, { CLEVERAGENTS_CONFORMANCE_STEP_MS: '60000' });
    });
    after(() => c?.close());

    // Bounded: the actor's next step is a minute away, so without A watching the log of the turn it
    // runs, its stream would end only then.
    it(
      'CancelTask on B stops the turn running on A at once: A’s stream ends canceled',
      { timeout: 20_000 },
      async () => {
        const [a, b] = c.instances as [HttpServerProcess, HttpServerProcess];
        const started = sse(a.baseUrl, 'SendStreamingMessage', message('tck-long-running-cancel'));
        const first = await started.next();
        const taskId = taskOf(first);
        const rest = collect(started);
        const canceled = await rpc(b.baseUrl, 'CancelTask', { id: taskId });
        assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
        // The actor's next step is a minute away: A's stream ends now only because A saw the cancel.
        const { events } = await rest;
        assert.equal(stateOf(events.at(-1)!), 'TASK_STATE_CANCELED');
        const log = await c.log(taskId);
        assert.equal((log.at(-1)?.payload as any).status.state, 'TASK_STATE_CANCELED');
        assert.equal((await rpc(a.baseUrl, 'GetTask', { id: taskId })).status.state, 'TASK_STATE_CANCELED');
      },
    );

    it('when A is killed mid-turn, B settles the task within the lease and its subscriber gets the final event', async () => {
      const [a, b] = c.instances as [HttpServerProcess, HttpServerProcess];
      const started = sse(a.baseUrl, 'SendStreamingMessage', message('tck-long-running-kill'));
      const first = await started.next();
      const taskId = taskOf(first);
      const onB = sse(b.baseUrl, 'SubscribeToTask', { id: taskId });
      // B's subscription is open once its snapshot arrives: only then is A killed.
      const snapshot = await onB.next();
      assert.ok(!snapshot.done && snapshot.value, 'B sent the task first');
      a.child.kill('SIGKILL');
      await started.return(undefined).catch(() => {});
      const events = TERMINAL.has(stateOf(snapshot.value) ?? '') ? [snapshot.value] : (await collect(onB)).events;
      const last = events.at(-1)!;
      assert.equal(stateOf(last), 'TASK_STATE_FAILED');
      assert.match(JSON.stringify(last.data), /restarted|stopped/);
      assert.equal((await rpc(b.baseUrl, 'GetTask', { id: taskId })).status.state, 'TASK_STATE_FAILED');
    });
  });
});

/** How many tasks are still submitted or working (what nobody may leave behind). */
async function stillRunning(c: Cluster): Promise<number> {
  const client = new pg.Client({ connectionString: c.db.url, application_name: 'ca-test-log' });
  await client.connect();
  try {
    const r = await client.query<{ n: number }>(
      "select count(*)::int as n from tasks where state in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')",
    );
    return r.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * A database outage, as a restart is to its clients: every connection of the instances is ended
 * and none can be made for `ms` (ALLOW_CONNECTIONS false, then true again).
 */
async function outage(c: Cluster, ms: number): Promise<void> {
  const name = new URL(c.db.url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name <> 'ca-test-log'",
      [name],
    );
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await admin.end();
  }
}

describe('several instances on one PostgreSQL database, when things go wrong (issue #40)', { skip: pgSkip() }, () => {
  describe('a database outage mid-turn (lease 6 s: no instance is taken for dead)', () => {
    let c: Cluster;
    before(async () => {
      c = await cluster(2, { CLEVERAGENTS_CONFORMANCE_STEP_MS: '300', CLEVERAGENTS_RUNNER_LEASE_MS: '6000' });
    });
    after(() => c?.close());

    it(
      'leaves no task working: the turn’s instance settles it once the database is back, and B’s subscriber gets it',
      { timeout: 40_000 },
      async () => {
        const [a, b] = c.instances as [HttpServerProcess, HttpServerProcess];
        const started = sse(a.baseUrl, 'SendStreamingMessage', message('tck-long-running-blip'));
        const first = await started.next();
        const taskId = taskOf(first);
        const onB = sse(b.baseUrl, 'SubscribeToTask', { id: taskId });
        const snapshot = await onB.next();
        assert.ok(!snapshot.done && snapshot.value, 'B sent the task first');
        const fromA = collect(started).catch((err: unknown) => ({ taskId, events: [], err }));
        const fromB = collect(onB);
        // The turn's next steps (every 300 ms) all fall in the outage.
        await outage(c, 1500);
        const { events } = await fromB;
        assert.equal(stateOf(events.at(-1)!), 'TASK_STATE_FAILED', 'B’s subscriber got the final event');
        assert.match(JSON.stringify(events.at(-1)!.data), /storage became unavailable/);
        // A's client: its stream ended, and nothing it was told claims that nothing changed.
        const own = await fromA;
        assert.doesNotMatch(JSON.stringify(own), /nothing was changed/);
        assert.equal((await rpc(b.baseUrl, 'GetTask', { id: taskId })).status.state, 'TASK_STATE_FAILED');
        assert.equal(await stillRunning(c), 0, 'no task left working');
        const log = await c.log(taskId);
        assert.equal((log.at(-1)?.payload as any).status.state, 'TASK_STATE_FAILED');
      },
    );
  });

  describe('a paused instance and a dead one (lease 1.5 s)', () => {
    let c: Cluster;
    let hook: Server;
    let hookUrl = '';
    /** Webhook bodies answered 200; until `up`, every delivery is refused with 503. */
    const delivered: unknown[] = [];
    let up = false;
    before(async () => {
      hook = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          if (up) delivered.push(JSON.parse(body));
          res.statusCode = up ? 200 : 503;
          res.end();
        });
      });
      await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
      hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      c = await cluster(2, { CLEVERAGENTS_CONFORMANCE_STEP_MS: '300' });
    });
    after(async () => {
      await c?.close();
      await new Promise((r) => hook.close(r));
    });

    it(
      'A frozen (SIGSTOP) past its lease writes nothing after B’s final event once it runs again (SIGCONT)',
      { timeout: 30_000 },
      async () => {
        const [a, b] = c.instances as [HttpServerProcess, HttpServerProcess];
        const started = sse(a.baseUrl, 'SendStreamingMessage', message('tck-long-running-pause'));
        const first = await started.next();
        const taskId = taskOf(first);
        const onB = sse(b.baseUrl, 'SubscribeToTask', { id: taskId });
        const snapshot = await onB.next();
        assert.ok(!snapshot.done && snapshot.value, 'B sent the task first');
        const fromA = collect(started).catch(() => ({ taskId, events: [] as SseEvent[] }));
        a.child.kill('SIGSTOP');
        try {
          const { events } = await collect(onB);
          assert.equal(stateOf(events.at(-1)!), 'TASK_STATE_FAILED', 'B settled the frozen turn');
        } finally {
          a.child.kill('SIGCONT');
        }
        // A runs again: its overdue steps fire, its stream ends; then the log is read.
        await fromA;
        await rpc(a.baseUrl, 'GetTask', { id: taskId });
        const log = await c.log(taskId);
        const final = log.findIndex((e) => TERMINAL.has((e.payload as any).status?.state));
        assert.equal((log[final]?.payload as any).status.state, 'TASK_STATE_FAILED');
        assert.deepEqual(log.slice(final + 1), [], 'no event after the final one');
        const got = await rpc(a.baseUrl, 'GetTask', { id: taskId });
        assert.equal(got.status.state, 'TASK_STATE_FAILED');
        assert.match(JSON.stringify(got.status.message), /restarted|stopped/, 'the final text is B’s');
      },
    );

    it(
      'a webhook gets every event at least once when the instance that queued them is killed (kill -9) before delivering',
      { timeout: 30_000 },
      async () => {
        const [, b] = c.instances as [HttpServerProcess, HttpServerProcess];
        // A third instance, to be killed: its deliveries are refused (503) until it is gone.
        const a = await startHttpServer({
          dataDir: c.dataDir,
          defaultActor: 'builtin/conformance',
          env: {
            ...process.env,
            CLEVERAGENTS_DATABASE_URL: c.db.url,
            CLEVERAGENTS_RUNNER_LEASE_MS: '1500',
            CLEVERAGENTS_CONFORMANCE_STEP_MS: '300',
          },
        });
        c.instances.push(a);
        const started = sse(a.baseUrl, 'SendStreamingMessage', {
          ...message('tck-long-running-hook'),
          configuration: { taskPushNotificationConfig: { id: 'hook', url: hookUrl } },
        });
        const first = await started.next();
        const taskId = taskOf(first);
        // A few events are stored (each with its deliveries), none delivered: then A dies.
        await started.next();
        await started.next();
        a.child.kill('SIGKILL');
        await started.return(undefined).catch(() => {});
        up = true;
        // B settles the task and takes A's pending deliveries over.
        await waitFor(
          async () => (await rpc(b.baseUrl, 'GetTask', { id: taskId })).status.state === 'TASK_STATE_FAILED',
        );
        const log = await c.log(taskId);
        const updates = (): string[] =>
          delivered.map((d: any) => JSON.stringify(d.statusUpdate ?? d.artifactUpdate ?? null));
        await waitFor(async () => log.every((e) => updates().includes(JSON.stringify(e.payload))));
        for (const e of log) assert.ok(updates().includes(JSON.stringify(e.payload)), `event ${e.seq} was delivered`);
      },
    );
  });
});

/** Polls `probe` until it holds (bounded by the test's timeout; never a timed assertion). */
async function waitFor(probe: () => Promise<boolean>): Promise<void> {
  while (!(await probe())) await new Promise((r) => setTimeout(r, 100));
}
