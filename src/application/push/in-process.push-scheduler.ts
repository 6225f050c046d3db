import type { Logger } from '../ports/logger.port.ts';
import type { OutboxTarget } from '../ports/push-outbox.port.ts';
import type { PushDrain, PushScheduler } from '../ports/push-scheduler.port.ts';

interface Slot {
  target: OutboxTarget;
  /** The drain loop, while it runs. */
  running?: Promise<void> | undefined;
  /** Set when woken while the loop ran: it drains again before it stops. */
  again: boolean;
  /** Ends a wait for the next entry's time (at stop). */
  wakeUp?: (() => void) | undefined;
}

/**
 * The one-process scheduler (SQLite, the default): a loop per target, in this process only,
 * that drains the target, waits until what is left is due (a retry's backoff), and drains again.
 */
export class InProcessPushScheduler implements PushScheduler {
  private drain: PushDrain | undefined;
  private readonly slots = new Map<string, Slot>();
  private stopped = false;

  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(logger: Logger, now: () => number = Date.now) {
    this.logger = logger;
    this.now = now;
  }

  start(drain: PushDrain): void {
    this.drain = drain;
  }

  wake(target: OutboxTarget, notBefore?: string): Promise<void> {
    this.kick(target, notBefore);
    return Promise.resolve();
  }

  resumeAll(targets: readonly OutboxTarget[]): Promise<void> {
    for (const t of targets) this.kick(t);
    return Promise.resolve();
  }

  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.slots.values()].flatMap((s) => (s.running ? [s.running] : []));
      if (busy.length === 0) return;
      await Promise.allSettled(busy);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.slots.values()) s.wakeUp?.();
    await this.idle();
  }

  private kick(target: OutboxTarget, notBefore?: string): void {
    const drain = this.drain;
    if (this.stopped || !drain) return;
    const id = `${target.taskId}\u0000${target.configId}`;
    let slot = this.slots.get(id);
    if (!slot) {
      slot = { target, again: false };
      this.slots.set(id, slot);
    }
    const s = slot;
    if (s.running) {
      s.again = true;
      return;
    }
    s.running = this.loop(s, drain, notBefore)
      .catch((err: unknown) =>
        this.logger.error({ err, taskId: target.taskId, configId: target.configId }, 'push delivery loop failed'),
      )
      .finally(() => {
        s.running = undefined;
        if (s.again && !this.stopped) this.kick(target);
        else if (this.slots.get(id) === s) this.slots.delete(id);
      });
  }

  private async loop(slot: Slot, drain: PushDrain, notBefore: string | undefined): Promise<void> {
    let at = notBefore;
    for (;;) {
      if (at !== undefined) {
        const wait = Date.parse(at) - this.now();
        if (wait > 0) await this.sleep(slot, wait);
      }
      slot.again = false;
      if (this.stopped) return;
      at = (await drain(slot.target)).notBefore;
      if (at === undefined) return;
    }
  }

  private sleep(slot: Slot, ms: number): Promise<void> {
    return new Promise((resolve) => {
      // Unref'd: a backoff must not hold a stopping process.
      const timer = setTimeout(done, ms);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        slot.wakeUp = undefined;
        resolve();
      }
      slot.wakeUp = done;
    });
  }
}
