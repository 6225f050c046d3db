/** The push notifier over a fake outbox and sender: order per config, retries, refusals, take-over. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PushNotifier } from '../../../../src/application/push/push-notifier.service.ts';
import {
  silentLogger,
  type OutboxEntry,
  type OutboxTarget,
  type PushOutbox,
  type StoredPushConfig,
  type WebhookSender,
} from '../../../../src/application/index.ts';
import type { Task } from '../../../../src/domain/a2a.model.ts';

type Row = OutboxEntry & { runnerId: string | null };

/** The outbox contract in memory (what SqlitePushOutboxRepository does in SQL). */
class FakeOutbox implements PushOutbox {
  rows: Row[] = [];
  private readonly self: string;

  constructor(self: string) {
    this.self = self;
  }
  async enqueue(
    entries: ReadonlyArray<Pick<OutboxEntry, 'taskId' | 'configId' | 'seq' | 'payload'>>,
    at: string,
  ): Promise<void> {
    for (const e of entries) {
      if (!this.rows.some((r) => same(r, e) && r.seq === e.seq))
        this.rows.push({ ...e, attempts: 0, nextAttemptAt: at, runnerId: this.self });
    }
  }
  async next(t: OutboxTarget): Promise<OutboxEntry | undefined> {
    return this.rows.filter((r) => same(r, t)).sort((a, b) => a.seq - b.seq)[0];
  }
  async remove(t: OutboxTarget, seq: number): Promise<void> {
    this.rows = this.rows.filter((r) => !(same(r, t) && r.seq === seq));
  }
  async retryLater(
    t: OutboxTarget,
    seq: number,
    attempts: number,
    nextAttemptAt: string,
    lastError: string,
  ): Promise<void> {
    const r = this.rows.find((x) => same(x, t) && x.seq === seq);
    if (r) Object.assign(r, { attempts, nextAttemptAt, lastError });
  }
  async removeTarget(t: OutboxTarget): Promise<void> {
    this.rows = this.rows.filter((r) => !same(r, t));
  }
  async claim(isLive: (runnerId: string | null) => Promise<boolean>, at: string): Promise<OutboxTarget[]> {
    for (const r of this.rows)
      if (r.runnerId !== this.self && !(await isLive(r.runnerId)))
        Object.assign(r, { runnerId: this.self, nextAttemptAt: at });
    const mine = this.rows.filter((r) => r.runnerId === this.self);
    return [
      ...new Map(mine.map((r) => [`${r.taskId}/${r.configId}`, { taskId: r.taskId, configId: r.configId }])).values(),
    ];
  }
}

const same = (a: OutboxTarget, b: OutboxTarget): boolean => a.taskId === b.taskId && a.configId === b.configId;

/** Records every attempt; `answer` decides each one (throw to fail it). */
class FakeSender implements WebhookSender {
  attempts: Array<{ url: string; seq: number; state: string }> = [];
  private readonly answer: (n: number, body: string) => void;

  constructor(answer: (n: number, body: string) => void = () => {}) {
    this.answer = answer;
  }
  async send(url: string, _headers: Record<string, string>, body: string): Promise<void> {
    const parsed = JSON.parse(body) as { statusUpdate: { status: { state: string }; metadata?: { seq: number } } };
    this.attempts.push({ url, seq: parsed.statusUpdate.metadata?.seq ?? -1, state: parsed.statusUpdate.status.state });
    this.answer(this.attempts.length, body);
  }
}

const task = { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } } as Task;
const config = (id: string, url = `https://hooks.example.com/${id}`): StoredPushConfig => ({ id, taskId: 't1', url });
const payloadOf = (seq: number, state = 'TASK_STATE_WORKING') => ({
  statusUpdate: { taskId: 't1', contextId: 'c1', status: { state }, metadata: { seq } },
});
const event = (seq: number, state = 'TASK_STATE_WORKING') => ({ seq, payload: payloadOf(seq, state) }) as never;

function notifier(
  outbox: PushOutbox,
  sender: WebhookSender,
  configs: StoredPushConfig[],
  opts: { maxAttempts?: number } = {},
) {
  return new PushNotifier(async () => configs, outbox, sender, silentLogger, { backoffMs: [1, 2, 3], ...opts });
}

/** drain(), keeping the event loop alive: backoff timers are unref'd (they must not hold a stopping process). */
async function drained(n: PushNotifier): Promise<void> {
  const alive = setInterval(() => {}, 1000);
  try {
    await n.drain();
  } finally {
    clearInterval(alive);
  }
}

describe('PushNotifier', () => {
  it('delivers in event order per config, holding later events behind a delivery that is being retried', async () => {
    const outbox = new FakeOutbox('me');
    const sender = new FakeSender((n) => {
      if (n <= 2) throw new Error('HTTP 500');
    });
    const n = notifier(outbox, sender, [config('a')]);
    for (const seq of [1, 2, 3]) n.notify(task, event(seq));
    await drained(n);
    assert.deepEqual(
      sender.attempts.map((a) => a.seq),
      [1, 1, 1, 2, 3],
      'event 1 retried until delivered, then 2 and 3',
    );
    assert.equal(n.failures('a'), 2);
    assert.deepEqual(outbox.rows, [], 'delivered entries are removed');
  });

  it('queues a task’s events in seq order even when the store would commit a later insert first', async () => {
    // As on a pool of connections: the insert of event 1 takes longer than those after it.
    class SlowFirstOutbox extends FakeOutbox {
      override async enqueue(
        entries: ReadonlyArray<Pick<OutboxEntry, 'taskId' | 'configId' | 'seq' | 'payload'>>,
        at: string,
      ): Promise<void> {
        if (entries[0]?.seq === 1) await new Promise((r) => setTimeout(r, 30));
        return super.enqueue(entries, at);
      }
    }
    const outbox = new SlowFirstOutbox('me');
    const sender = new FakeSender();
    const n = notifier(outbox, sender, [config('a')]);
    n.notify(task, event(0));
    await drained(n);
    // The configs are known now: each event is routed at once, its own insert.
    for (const seq of [1, 2, 3]) n.notify(task, event(seq));
    await drained(n);
    assert.deepEqual(
      sender.attempts.map((a) => a.seq),
      [0, 1, 2, 3],
      'never a later event before an earlier one still being queued',
    );
  });

  it('queues an entry for every config of the task, each delivered on its own', async () => {
    const outbox = new FakeOutbox('me');
    let bFailed = false;
    const sender = new FakeSender(() => {
      // The first attempt to b fails; a is not held up by it.
      if (sender.attempts.at(-1)?.url.endsWith('/b') && !bFailed) {
        bFailed = true;
        throw new Error('HTTP 502');
      }
    });
    const n = notifier(outbox, sender, [config('a'), config('b')]);
    n.notify(task, event(1));
    n.notify(task, event(2));
    await drained(n);
    const to = (c: string) => sender.attempts.filter((a) => a.url.endsWith(`/${c}`)).map((a) => a.seq);
    assert.deepEqual(to('a'), [1, 2]);
    assert.deepEqual(to('b'), [1, 1, 2]);
  });

  it('queues an event as it is handed to storage once the configs are known (in the event’s own commit), and delivers it once stored', async () => {
    const outbox = new FakeOutbox('me');
    const sender = new FakeSender();
    const n = notifier(outbox, sender, [config('a')]);
    n.notify(task, event(1));
    await drained(n);
    n.recording('t1', event(2));
    assert.deepEqual(
      outbox.rows.map((r) => r.seq),
      [2],
      'queued before the event is reported stored',
    );
    assert.deepEqual(
      sender.attempts.map((a) => a.seq),
      [1],
      'but not sent before',
    );
    n.notify(task, event(2));
    await drained(n);
    assert.deepEqual(
      sender.attempts.map((a) => a.seq),
      [1, 2],
      'sent once, not queued twice',
    );
    assert.deepEqual(outbox.rows, []);
  });

  it('does not retry a refused target (permanent error) and goes on with the next event', async () => {
    const outbox = new FakeOutbox('me');
    const sender = new FakeSender(() => {
      throw Object.assign(new Error('webhook host resolves to 10.0.0.1, a private address'), { permanent: true });
    });
    const n = notifier(outbox, sender, [config('a')]);
    n.notify(task, event(1));
    n.notify(task, event(2));
    await drained(n);
    assert.deepEqual(
      sender.attempts.map((a) => a.seq),
      [1, 2],
      'one attempt each',
    );
    assert.deepEqual(outbox.rows, []);
  });

  it('gives a delivery up after maxAttempts and delivers the next', async () => {
    const outbox = new FakeOutbox('me');
    const sender = new FakeSender((_n, body) => {
      if (body.includes('"seq":1')) throw new Error('HTTP 503');
    });
    const n = notifier(outbox, sender, [config('a')], { maxAttempts: 3 });
    n.notify(task, event(1));
    n.notify(task, event(2));
    await drained(n);
    assert.deepEqual(
      sender.attempts.map((a) => a.seq),
      [1, 1, 1, 2],
    );
    assert.deepEqual(outbox.rows, []);
  });

  it('resumes the entries of a runner that is gone, in order, and leaves a live runner its own', async () => {
    const outbox = new FakeOutbox('me');
    // Due in an hour (a long backoff): taken over, they are due at once.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const row = (seq: number, runnerId: string, configId = 'a'): Row => ({
      taskId: 't1',
      configId,
      seq,
      payload: JSON.stringify(payloadOf(seq)),
      attempts: 2,
      nextAttemptAt: later,
      runnerId,
    });
    outbox.rows = [row(2, 'dead'), row(1, 'dead'), row(5, 'alive', 'b')];
    const sender = new FakeSender();
    const n = notifier(outbox, sender, [config('a'), config('b')]);
    assert.equal(await n.resume(async (id) => id === 'alive'), 1);
    await drained(n);
    assert.deepEqual(
      sender.attempts.map((a) => `${a.url.slice(-1)}${a.seq}`),
      ['a1', 'a2'],
    );
    assert.deepEqual(
      outbox.rows.map((r) => `${r.configId}${r.seq}:${r.runnerId}`),
      ['b5:alive'],
    );
  });

  it('drops what is pending for a config that was deleted', async () => {
    const outbox = new FakeOutbox('me');
    const at = new Date(0).toISOString();
    outbox.rows = [
      { taskId: 't1', configId: 'gone', seq: 1, payload: '{}', attempts: 0, nextAttemptAt: at, runnerId: null },
    ];
    const sender = new FakeSender();
    const n = notifier(outbox, sender, [config('a')]);
    await n.resume(async () => false);
    await drained(n);
    assert.deepEqual(sender.attempts, []);
    assert.deepEqual(outbox.rows, []);
  });

  it('stops without losing what is pending: the entries stay in the outbox', async () => {
    const outbox = new FakeOutbox('me');
    const sender = new FakeSender(() => {
      throw new Error('HTTP 500');
    });
    const n = new PushNotifier(async () => [config('a')], outbox, sender, silentLogger, { backoffMs: [60_000] });
    n.notify(task, event(1));
    // Wait for the first (failed) attempt; the retry waits a minute.
    for (let i = 0; i < 200 && sender.attempts.length === 0; i++) await new Promise((r) => setImmediate(r));
    await n.stop();
    assert.equal(sender.attempts.length, 1);
    assert.deepEqual(
      outbox.rows.map((r) => [r.seq, r.attempts, r.lastError]),
      [[1, 1, 'HTTP 500']],
    );
  });
});
