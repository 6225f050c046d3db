import { isTerminal, type Task } from '../../domain/a2a.model.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { PushConfigRepository, StoredPushConfig } from '../ports/push-config.repository.port.ts';
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
  /**
   * How configs changed by other processes sharing the store are noticed: a version read at every
   * event, or change notifications. With neither method, configs are read at every event; without
   * this option at all, this process is taken to be the store's only writer (tests).
   */
  changes?: Pick<PushConfigRepository, 'version' | 'watch'> | undefined;
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
 *
 * A task's configs are cached while it runs, and every instance sharing the store sees a change at
 * its next event: a change made here forgets them at once ({@link invalidate}); one made by another
 * process is noticed through `changes` (SQLite: a version read per event; PostgreSQL: a NOTIFY,
 * which costs nothing per event where a read would cost a round trip each).
 */
export class PushNotifier {
  /** Per task, the read of its configs in flight. */
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
  /** Per task, the routing of its latest event still waiting for configs: later events go after it. */
  private readonly routing = new Map<string, Promise<void>>();
  /** `changes.version()` when the cache was last found current. */
  private cacheVersion: number | undefined;
  /** Change notifications: until they are listened to, nothing is cached. */
  private watching: Promise<void> | undefined;
  private listening = false;
  private unwatch: (() => Promise<void>) | undefined;

  private readonly changes: PushNotifierOptions['changes'];
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
    this.changes = opts.changes;
    this.scheduler = opts.scheduler ?? new InProcessPushScheduler(logger, this.now);
    this.scheduler.start((target, until) => this.drainTarget(target, until));
  }

  /** Forget cached configs of a task (after create or delete). */
  invalidate(taskId: string): void {
    this.configs.delete(taskId);
    this.loaded.delete(taskId);
  }

  /**
   * A task this process is creating without configs: none to read at its first event. Kept only
   * where a later change would be noticed (as a load is); set before the create is sent, so a
   * config another process adds once the task exists is noticed after it and clears it.
   */
  knownEmpty(taskId: string): void {
    if (!this.mayCache()) return;
    this.cached(taskId); // the cache brought up to date with the store's version first
    if (!this.configs.has(taskId)) this.loaded.set(taskId, []);
  }

  /** Forget every cached config (changes may have been missed). */
  private forgetAll(): void {
    this.configs.clear();
    this.loaded.clear();
  }

  /**
   * An event handed to storage: when the task's configs are known, its deliveries are queued now,
   * in the event's own group commit, so that a stored event always has its deliveries queued.
   */
  recording(taskId: string, item: StreamItem): void {
    const known = this.cached(taskId);
    // Not ahead of an earlier event still waiting for the configs.
    if (!known || known.length === 0 || this.stopped || this.routing.has(taskId)) return;
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
    const pending = this.routing.get(task.id);
    const known = this.cached(task.id);
    // Configs already loaded: most tasks have none, and then an event costs nothing here.
    if (known && !pending) return this.fanOut(task.id, known, item);
    // The configs as of this event, applied after the events before it (two loads may overlap
    // when a change came in between, and the later one may answer first).
    const configs = known
      ? Promise.resolve(known)
      : this.loadConfigs(task.id).catch((err: unknown) => {
          this.logger.warn({ err, taskId: task.id }, 'loading push configs failed');
          return [] as StoredPushConfig[];
        });
    const routed = Promise.all([pending?.catch(() => {}), configs]).then(([, list]) =>
      this.fanOut(task.id, list, item),
    );
    this.routing.set(task.id, routed);
    this.track(
      routed.finally(() => {
        if (this.routing.get(task.id) === routed) this.routing.delete(task.id);
      }),
    );
  }

  /** The task's configs if cached and still current. */
  private cached(taskId: string): StoredPushConfig[] | undefined {
    const version = this.changes?.version?.();
    if (version !== this.cacheVersion) {
      this.cacheVersion = version;
      this.forgetAll();
    }
    return this.loaded.get(taskId);
  }

  /** Loads a task's configs (one load at a time per task), caching them when a change would be noticed. */
  private loadConfigs(taskId: string): Promise<StoredPushConfig[]> {
    const inFlight = this.configs.get(taskId);
    if (inFlight) return inFlight;
    const keep = this.mayCache();
    const loading = this.load(taskId);
    this.configs.set(taskId, loading);
    // A change in the meantime (invalidate, forgetAll) dropped this load: its answer is not kept.
    loading.then(
      (list) => {
        if (this.configs.get(taskId) !== loading) return;
        this.configs.delete(taskId);
        if (keep) this.loaded.set(taskId, list);
      },
      () => {
        if (this.configs.get(taskId) === loading) this.configs.delete(taskId);
      },
    );
    return loading;
  }

  /** Whether configs loaded now may be kept: only when a later change by another process would be seen. */
  private mayCache(): boolean {
    const changes = this.changes;
    if (!changes) return true;
    if (changes.watch) {
      this.watching ??= this.watch(changes.watch.bind(changes));
      return this.listening;
    }
    return changes.version !== undefined;
  }

  private async watch(watch: NonNullable<PushConfigRepository['watch']>): Promise<void> {
    try {
      const stop = await watch((taskId) => (taskId === '' ? this.forgetAll() : this.invalidate(taskId)));
      if (this.stopped) return void (await stop());
      this.unwatch = stop;
      this.listening = true;
    } catch (err) {
      // Read at every event meanwhile; the next load tries again.
      this.logger.warn({ err }, 'listening for push config changes failed; reading them at every event');
      this.watching = undefined;
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
    await this.unwatch?.().catch(() => {});
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
    for (;;) {
      if (this.stopped || (until !== undefined && this.now() >= until))
        return { notBefore: new Date(this.now()).toISOString() };
      const entry = await this.outbox.next(key);
      if (!entry) return {};
      if (Date.parse(entry.nextAttemptAt) > this.now()) return { notBefore: entry.nextAttemptAt };
      // Read for each entry (from the cache when current): a config deleted meanwhile gets nothing more.
      const list = this.cached(key.taskId) ?? (await this.loadConfigs(key.taskId));
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
