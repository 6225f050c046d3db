import { isTerminal, type Task } from '../../domain/a2a.model.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { StoredPushConfig } from '../ports/push-config.repository.port.ts';
import type { OutboxTarget, PushOutbox } from '../ports/push-outbox.port.ts';
import type { PushDrainResult, PushScheduler } from '../ports/push-scheduler.port.ts';
import type { WebhookSender } from '../ports/webhook.port.ts';
import type { StreamItem } from '../tasks/task.service.ts';
import { InProcessPushScheduler } from './in-process.push-scheduler.ts';

export interface PushNotifierOptions {
  /** Delay before the n-th retry (the last entry repeats); default 0.2 s, 1 s, 3 s, 10 s, 30 s, 60 s. */
  backoffMs?: readonly number[];
  /** Attempts before a delivery is given up (default 12: about seven minutes of retries). */
  maxAttempts?: number;
  timeoutMs?: number;
  now?: () => number;
  /**
   * When and where targets are drained (default: a loop per target in this process). With
   * several server instances on one database, a shared queue (PgBossPushScheduler).
   */
  scheduler?: PushScheduler | undefined;
}

/**
 * Delivers every stored task event to the task's webhooks, at least once and in order per
 * webhook, through a durable outbox: an event is queued (stored) for each config, then attempted;
 * a delivered entry is removed, a failed one retried with backoff (each failure counted), a
 * refused target (SSRF guard) dropped at once. After a restart {@link resume} takes up what was
 * pending. The payload is the A2A StreamResponse (§4.3.3). Which process drains a target, and
 * when, is the {@link PushScheduler}'s: one drain per target at a time.
 *
 * On PostgreSQL the task store queues an event's deliveries in the event's own statement
 * ({@link PushOutbox.queuedWithEvents}). On SQLite an event is queued in its own group commit when
 * the task's configs are already loaded (every event after a task's first); otherwise in the
 * commit after it, so a crash between the two can lose that event's deliveries (the event itself
 * is kept).
 */
export class PushNotifier {
  private readonly configs = new Map<string, Promise<StoredPushConfig[]>>();
  /** The same configs once loaded, so later events need no promise. */
  private readonly loaded = new Map<string, StoredPushConfig[]>();
  /** Failed attempts per target (only targets that failed; for diagnostics and tests). */
  private readonly failed = new Map<string, { configId: string; n: number }>();
  private readonly scheduler: PushScheduler;
  /** Events queued while being stored (see recording()), until their stored notification comes. */
  private readonly early = new Map<string, { list: StoredPushConfig[]; queued: Promise<boolean> }>();
  private readonly backoff: readonly number[];
  private readonly maxAttempts: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  /** Per task, the outbox insert of its latest event routed here: the next one waits for it. */
  private readonly enqueueing = new Map<string, Promise<boolean>>();
  /** Queueing writes in flight (so drain() can wait for them). */
  private readonly queueing = new Set<Promise<void>>();
  private stopped = false;

  private readonly load: (taskId: string) => Promise<StoredPushConfig[]>;
  private readonly outbox: PushOutbox;
  private readonly sender: WebhookSender;
  private readonly logger: Logger;

  constructor(
    load: (taskId: string) => Promise<StoredPushConfig[]>,
    outbox: PushOutbox,
    sender: WebhookSender,
    logger: Logger,
    opts: PushNotifierOptions = {},
  ) {
    this.load = load;
    this.outbox = outbox;
    this.sender = sender;
    this.logger = logger;
    this.backoff = opts.backoffMs ?? [200, 1000, 3000, 10_000, 30_000, 60_000];
    this.maxAttempts = opts.maxAttempts ?? 12;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.now = opts.now ?? Date.now;
    this.scheduler = opts.scheduler ?? new InProcessPushScheduler(logger, this.now);
    this.scheduler.start((target, until) => this.drainTarget(target, until));
  }

  /** Forget cached configs of a task (after create or delete). */
  invalidate(taskId: string): void {
    this.configs.delete(taskId);
    this.loaded.delete(taskId);
  }

  /**
   * An event handed to storage: when the task's configs are known, its deliveries are queued now,
   * in the event's own group commit, so that a stored event always has its deliveries queued.
   */
  recording(taskId: string, item: StreamItem): void {
    const known = this.loaded.get(taskId);
    if (!known || known.length === 0 || this.stopped) return;
    const key = `${taskId}\u0000${item.seq}`;
    const queued = this.enqueue(taskId, known, item);
    this.early.set(key, { list: known, queued });
    // Failed (with the event's commit, most likely): no stored notification will come for it.
    void queued.then((ok) => {
      if (!ok) this.early.delete(key);
    });
  }

  notify(task: Task, item: StreamItem): void {
    const early = this.early.get(`${task.id}\u0000${item.seq}`);
    if (early) {
      this.early.delete(`${task.id}\u0000${item.seq}`);
      this.track(early.queued.then((ok) => (ok ? this.kickAll(task.id, early.list) : undefined)));
    } else this.route(task, item);
    // A finished task sends nothing more: keeping its configs would grow memory with every task.
    if ('statusUpdate' in item.payload && isTerminal(item.payload.statusUpdate.status.state)) this.invalidate(task.id);
  }

  private route(task: Task, item: StreamItem): void {
    const known = this.loaded.get(task.id);
    if (known) {
      // Configs already loaded: most tasks have none, and then an event costs nothing here.
      this.fanOut(task.id, known, item);
    } else {
      let configs = this.configs.get(task.id);
      if (!configs) {
        const loading = this.load(task.id).catch((err: unknown) => {
          this.logger.warn({ err, taskId: task.id }, 'loading push configs failed');
          return [] as StoredPushConfig[];
        });
        configs = loading;
        this.configs.set(task.id, loading);
        void loading.then((list) => {
          if (this.configs.get(task.id) === loading) this.loaded.set(task.id, list);
        });
      }
      this.track(configs.then((list) => this.fanOut(task.id, list, item)));
    }
  }

  /**
   * Takes up pending deliveries: this process's, and those of runners that are gone (`isLive`),
   * e.g. after a restart. Returns how many webhooks have deliveries pending.
   */
  async resume(isLive: (runnerId: string | null) => Promise<boolean>): Promise<number> {
    const pending = await this.outbox.claim(isLive, new Date(this.now()).toISOString());
    if (!this.stopped) await this.scheduler.resumeAll(pending);
    return pending.length;
  }

  /** Failure count per config id (for diagnostics and tests). */
  failures(configId: string): number {
    let n = 0;
    for (const f of this.failed.values()) if (f.configId === configId) n += f.n;
    return n;
  }

  /**
   * Waits until what is queued so far has been handed to the scheduler and no delivery of this
   * process is busy (retries included; with a shared queue, another instance may still deliver).
   */
  async drain(): Promise<void> {
    for (;;) {
      if (this.queueing.size === 0) {
        await this.scheduler.idle();
        if (this.queueing.size === 0) return;
      }
      await Promise.allSettled([...this.queueing]);
    }
  }

  /** Stops delivering (pending entries stay in the outbox for the next start, or another instance). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.queueing]);
    await this.scheduler.stop();
  }

  private fanOut(taskId: string, list: StoredPushConfig[], item: StreamItem): void {
    if (list.length === 0 || this.stopped) return;
    // A task's events enter the outbox in seq order: on a pool of connections two inserts could
    // commit the other way round, and a drain in between would deliver the later event first.
    const prev = this.enqueueing.get(taskId);
    const queued = prev ? prev.then(() => this.enqueue(taskId, list, item)) : this.enqueue(taskId, list, item);
    this.enqueueing.set(taskId, queued);
    void queued.then(() => {
      if (this.enqueueing.get(taskId) === queued) this.enqueueing.delete(taskId);
    });
    this.track(queued.then((ok) => (ok ? this.kickAll(taskId, list) : undefined)));
  }

  /** Queues one event for each config; resolves true once stored (false when that failed, logged). */
  private enqueue(taskId: string, list: StoredPushConfig[], item: StreamItem): Promise<boolean> {
    // Queued with the event itself, in its commit: nothing to write, only to deliver.
    if (this.outbox.queuedWithEvents) return Promise.resolve(true);
    // Serialised only for tasks that have webhooks.
    const payload = JSON.stringify(item.payload);
    const entries = list.map((c) => ({ taskId, configId: c.id, seq: item.seq, payload }));
    return this.outbox.enqueue(entries, new Date(this.now()).toISOString()).then(
      () => true,
      (err: unknown) => {
        this.logger.error({ err, taskId, seq: item.seq }, 'queueing push notifications failed');
        return false;
      },
    );
  }

  private kickAll(taskId: string, list: StoredPushConfig[]): void {
    for (const c of list) this.kick({ taskId, configId: c.id });
  }

  private kick(key: OutboxTarget): void {
    if (!this.stopped) this.track(this.scheduler.wake(key));
  }

  /**
   * Delivers a target's due entries one at a time, in seq order, until none is left or the next
   * is not due (its time is returned); past `until` (or once stopped) it returns "more, now".
   */
  private async drainTarget(key: OutboxTarget, until?: number): Promise<PushDrainResult> {
    let configs: StoredPushConfig[] | undefined;
    for (;;) {
      if (this.stopped || (until !== undefined && this.now() >= until))
        return { notBefore: new Date(this.now()).toISOString() };
      const entry = await this.outbox.next(key);
      if (!entry) return {};
      if (Date.parse(entry.nextAttemptAt) > this.now()) return { notBefore: entry.nextAttemptAt };
      // Loaded once per drain when this process has not cached them (another instance queued the event).
      const list = this.loaded.get(key.taskId) ?? (configs ??= await this.load(key.taskId));
      const config = list.find((c) => c.id === key.configId);
      if (!config) {
        // The config was deleted: what it still had pending goes with it.
        await this.outbox.removeTarget(key);
        return {};
      }
      try {
        await this.sender.send(config.url, headersOf(config), entry.payload, AbortSignal.timeout(this.timeoutMs));
        await this.outbox.remove(key, entry.seq);
      } catch (err) {
        this.countFailure(key);
        const attempts = entry.attempts + 1;
        const permanent = (err as { permanent?: unknown } | null)?.permanent === true;
        if (permanent || attempts >= this.maxAttempts) {
          this.logger.warn(
            { err, url: config.url, configId: key.configId, taskId: key.taskId, seq: entry.seq, attempts },
            permanent ? 'push notification refused' : 'push notification given up',
          );
          await this.outbox.remove(key, entry.seq);
          continue;
        }
        const delay = this.backoff[Math.min(attempts - 1, this.backoff.length - 1)] ?? 1000;
        await this.outbox.retryLater(
          key,
          entry.seq,
          attempts,
          new Date(this.now() + delay).toISOString(),
          err instanceof Error ? err.message : String(err),
        );
      }
    }
  }

  private countFailure(key: OutboxTarget): void {
    const id = `${key.taskId}\u0000${key.configId}`;
    const f = this.failed.get(id);
    if (f) f.n++;
    else this.failed.set(id, { configId: key.configId, n: 1 });
  }

  private track(p: Promise<void>): void {
    this.queueing.add(p);
    // A delivery's failure (even an unexpected one, e.g. an event that cannot be serialised) is
    // logged here: it must never surface as an unhandled rejection.
    void p
      .catch((err: unknown) => this.logger.error({ err }, 'push notification failed'))
      .finally(() => this.queueing.delete(p));
  }
}

function headersOf(c: StoredPushConfig): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (c.token) headers['x-a2a-notification-token'] = c.token;
  if (c.authentication) {
    headers['authorization'] = `${c.authentication.scheme} ${c.authentication.credentials ?? ''}`.trim();
  }
  return headers;
}
