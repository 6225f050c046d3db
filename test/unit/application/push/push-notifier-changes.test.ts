/**
 * The push notifier's cache of a task's configs against changes made by another process sharing
 * the store (issue #40, point 2): a version read at each event (SQLite), change notifications
 * (PostgreSQL), or neither (read at every event).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PushNotifier, type PushNotifierOptions } from '../../../../src/application/push/push-notifier.service.ts';
import {
  silentLogger,
  type OutboxEntry,
  type OutboxTarget,
  type PushOutbox,
  type StoredPushConfig,
  type WebhookSender,
} from '../../../../src/application/index.ts';
import type { Task } from '../../../../src/domain/a2a.model.ts';

/** An outbox in memory, enough for one process delivering its own entries. */
class MemoryOutbox implements PushOutbox {
  rows: OutboxEntry[] = [];
  async enqueue(entries: ReadonlyArray<Pick<OutboxEntry, 'taskId' | 'configId' | 'seq' | 'payload'>>, at: string) {
    for (const e of entries) this.rows.push({ ...e, attempts: 0, nextAttemptAt: at });
  }
  async next(t: OutboxTarget) {
    return this.rows.filter((r) => same(r, t)).sort((a, b) => a.seq - b.seq)[0];
  }
  async remove(t: OutboxTarget, seq: number) {
    this.rows = this.rows.filter((r) => !(same(r, t) && r.seq === seq));
  }
  async retryLater() {}
  async removeTarget(t: OutboxTarget) {
    this.rows = this.rows.filter((r) => !same(r, t));
  }
  async claim() {
    return [];
  }
}
const same = (a: OutboxTarget, b: OutboxTarget): boolean => a.taskId === b.taskId && a.configId === b.configId;

/** Records each delivery as `<config><seq>` (the config is the URL's last letter). */
class Recorder implements WebhookSender {
  sent: string[] = [];
  async send(url: string, _h: Record<string, string>, body: string) {
    const seq = (JSON.parse(body) as { statusUpdate: { metadata: { seq: number } } }).statusUpdate.metadata.seq;
    this.sent.push(`${url.slice(-1)}${seq}`);
  }
}

const task = { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } } as Task;
const config = (id: string): StoredPushConfig => ({ id, taskId: 't1', url: `https://hooks.example.com/${id}` });
const event = (seq: number) =>
  ({
    seq,
    payload: {
      statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' }, metadata: { seq } },
    },
  }) as never;

/** The store's configs of t1, and how many times the notifier read them. */
class Store {
  configs: StoredPushConfig[] = [];
  reads = 0;
  /** A read answers after this many ms (the first read only, when `slowFirst`). */
  slowFirst = 0;
  load = async (): Promise<StoredPushConfig[]> => {
    const list = [...this.configs];
    if (this.reads++ === 0 && this.slowFirst) await new Promise((r) => setTimeout(r, this.slowFirst));
    return list;
  };
}

function setup(changes: PushNotifierOptions['changes']) {
  const store = new Store();
  const outbox = new MemoryOutbox();
  const sender = new Recorder();
  const n = new PushNotifier(store.load, outbox, sender, silentLogger, { backoffMs: [1], changes });
  return { store, outbox, sender, n };
}

async function drained(n: PushNotifier): Promise<void> {
  const alive = setInterval(() => {}, 1000);
  try {
    await n.drain();
  } finally {
    clearInterval(alive);
  }
}

describe('PushNotifier and config changes made elsewhere', () => {
  it('keeps a task’s configs while the store’s version stands, and reads them again at the next event once it moves', async () => {
    let version = 1;
    const { store, sender, n } = setup({ version: () => version });
    store.configs = [config('a')];
    n.notify(task, event(1));
    await drained(n);
    n.notify(task, event(2));
    await drained(n);
    assert.equal(store.reads, 1, 'read once while nothing changed');
    // Another process adds b and removes a.
    store.configs = [config('b')];
    version++;
    n.notify(task, event(3));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1', 'a2', 'b3']);
    assert.equal(store.reads, 2);
  });

  it('forgets a task’s configs when told of a change to them, and every task’s when changes may have been missed', async () => {
    let tell: ((taskId: string) => void) | undefined;
    let stopped = 0;
    const { store, sender, n } = setup({
      watch: async (handler) => {
        tell = handler;
        return async () => void stopped++;
      },
    });
    store.configs = [config('a')];
    n.notify(task, event(1));
    await drained(n);
    assert.equal(store.reads, 2, 'the first read, made before the notifications were listened to, was not kept');
    n.notify(task, event(2));
    n.notify(task, event(3));
    await drained(n);
    assert.equal(store.reads, 2, 'the second was');
    store.configs = [config('a'), config('b')];
    tell?.('other-task');
    n.notify(task, event(4));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1', 'a2', 'a3', 'a4'], 'another task’s change leaves t1’s cache');
    tell?.('t1');
    n.notify(task, event(5));
    await drained(n);
    store.configs = [config('b')];
    tell?.('');
    n.notify(task, event(6));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1', 'a2', 'a3', 'a4', 'a5', 'b5', 'b6']);
    await n.stop();
    assert.equal(stopped, 1, 'stopping stops listening');
  });

  it('reads no configs for a task created here without one, and still delivers to a config made afterwards elsewhere', async () => {
    let tell: ((taskId: string) => void) | undefined;
    const { store, sender, n } = setup({
      watch: async (handler) => {
        tell = handler;
        return async () => {};
      },
    });
    // Listening starts with the first load (another task's); until then nothing is taken as known.
    n.notify({ ...task, id: 'other' }, event(1));
    await drained(n);
    const before = store.reads;
    n.knownEmpty('t1');
    n.notify(task, event(1));
    n.notify(task, event(2));
    await drained(n);
    assert.equal(store.reads, before, 'nothing read for a task known to have no configs');
    store.configs = [config('a')];
    tell?.('t1');
    n.notify(task, event(3));
    await drained(n);
    assert.deepEqual(sender.sent, ['a3']);
    assert.equal(store.reads, before + 1);
  });

  it('takes nothing as known while a change made elsewhere would go unnoticed', async () => {
    const { store, sender, n } = setup({ watch: () => new Promise(() => {}) });
    store.configs = [config('a')];
    n.knownEmpty('t1');
    n.notify(task, event(1));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1']);
  });

  it('reads the configs at every event when the store cannot tell of changes', async () => {
    const { store, sender, n } = setup({});
    store.configs = [config('a')];
    n.notify(task, event(1));
    await drained(n);
    store.configs = [];
    n.notify(task, event(2));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1']);
    assert.equal(store.reads, 3, 'one read per event and one for the delivery');
  });

  it('delivers nothing more to a config deleted while its entries wait, even from the cache', async () => {
    let version = 1;
    const { store, outbox, sender, n } = setup({ version: () => version });
    store.configs = [config('a')];
    n.notify(task, event(1));
    await drained(n);
    // Queued (e.g. by another instance) but not yet drained when the config goes.
    n.recording('t1', event(2));
    store.configs = [];
    version++;
    n.notify(task, event(2));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1']);
    assert.deepEqual(outbox.rows, [], 'what it had pending went with it');
  });

  it('keeps a task’s events in order when a change makes a later read answer before an earlier one', async () => {
    let version = 1;
    const { store, sender, n } = setup({ version: () => version });
    store.configs = [config('a')];
    store.slowFirst = 30;
    n.notify(task, event(1));
    version++;
    n.notify(task, event(2));
    n.notify(task, event(3));
    await drained(n);
    assert.deepEqual(sender.sent, ['a1', 'a2', 'a3']);
  });
});
