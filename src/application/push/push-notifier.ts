import { isTerminal, type Task } from '../../domain/a2a.model.js';
import type { Logger } from '../ports/logger.port.js';
import type { StoredPushConfig } from '../ports/push-config.repository.port.js';
import type { WebhookSender } from '../ports/webhook.port.js';
import type { StreamItem } from '../tasks/task.service.js';

export interface PushNotifierOptions {
  /** Delays between attempts; one attempt more than entries. */
  backoffMs?: readonly number[];
  timeoutMs?: number;
}

interface Target {
  queue: Promise<void>;
  failures: number;
}

/**
 * Delivers every stored task event to the task's webhooks, at least once: in order per webhook,
 * retried with backoff, each failure counted. The payload is the A2A StreamResponse (§4.3.3).
 */
export class PushNotifier {
  private readonly configs = new Map<string, Promise<StoredPushConfig[]>>();
  /** The same configs once loaded, so later events need no promise. */
  private readonly loaded = new Map<string, StoredPushConfig[]>();
  private readonly targets = new Map<string, Target>();
  private readonly backoff: readonly number[];
  private readonly timeoutMs: number;
  private readonly inflight = new Set<Promise<void>>();

  constructor(
    private readonly load: (task: Task) => Promise<StoredPushConfig[]>,
    private readonly sender: WebhookSender,
    private readonly logger: Logger,
    opts: PushNotifierOptions = {},
  ) {
    this.backoff = opts.backoffMs ?? [200, 1000, 3000];
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  /** Forget cached configs of a task (after create or delete). */
  invalidate(taskId: string): void {
    this.configs.delete(taskId);
    this.loaded.delete(taskId);
  }

  notify(task: Task, item: StreamItem): void {
    const known = this.loaded.get(task.id);
    if (known) {
      // Configs already loaded: most tasks have none, and then an event costs nothing here.
      this.fanOut(known, item);
    } else {
      let configs = this.configs.get(task.id);
      if (!configs) {
        const loading = this.load(task).catch(() => [] as StoredPushConfig[]);
        configs = loading;
        this.configs.set(task.id, loading);
        void loading.then((list) => {
          if (this.configs.get(task.id) === loading) this.loaded.set(task.id, list);
        });
      }
      this.track(configs.then((list) => this.fanOut(list, item)));
    }
    // A finished task sends nothing more: keeping its configs would grow memory with every task.
    if ('statusUpdate' in item.payload && isTerminal(item.payload.statusUpdate.status.state)) this.invalidate(task.id);
  }

  private fanOut(list: StoredPushConfig[], item: StreamItem): void {
    if (list.length === 0) return;
    // Serialised only for tasks that have webhooks.
    const body = JSON.stringify(item.payload);
    for (const c of list) this.enqueue(c, body);
  }

  /** Failure count per config id (for diagnostics and tests). */
  failures(configId: string): number {
    return [...this.targets.entries()].filter(([k]) => k.endsWith(`\u0000${configId}`)).reduce((n, [, t]) => n + t.failures, 0);
  }

  /** Waits until everything queued so far has been delivered or given up. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  private enqueue(c: StoredPushConfig, body: string): void {
    const key = `${c.taskId}\u0000${c.id}`;
    let target = this.targets.get(key);
    if (!target) {
      target = { queue: Promise.resolve(), failures: 0 };
      this.targets.set(key, target);
    }
    const t = target;
    t.queue = t.queue.then(() => this.deliver(c, body, t));
    this.track(t.queue);
  }

  private async deliver(c: StoredPushConfig, body: string, target: Target): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (c.token) headers['x-a2a-notification-token'] = c.token;
    if (c.authentication) {
      headers['authorization'] = `${c.authentication.scheme} ${c.authentication.credentials ?? ''}`.trim();
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.sender.send(c.url, headers, body, AbortSignal.timeout(this.timeoutMs));
        return;
      } catch (err) {
        target.failures++;
        const permanent = (err as { permanent?: unknown } | null)?.permanent === true;
        const delay = permanent ? undefined : this.backoff[attempt];
        if (delay === undefined) {
          this.logger.warn({ err, url: c.url, configId: c.id, taskId: c.taskId }, 'push notification given up');
          return;
        }
        await new Promise((r) => setTimeout(r, delay).unref());
      }
    }
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    // A delivery's failure (even an unexpected one, e.g. an event that cannot be serialised) is
    // logged here: it must never surface as an unhandled rejection.
    void p
      .catch((err: unknown) => this.logger.error({ err }, 'push notification failed'))
      .finally(() => this.inflight.delete(p));
  }
}
