import type { TaskEvent } from '../../domain/a2a.model.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';

/** A task followed through the log: where it stands, and what to do with newer events. */
export interface FollowedTask {
  /** The sequence number of the last event already applied. */
  after(): number;
  /** Applies events read from the log; returns false once the task needs no more following. */
  apply(events: TaskEvent[]): boolean;
}

/**
 * Follows tasks that another process (a second local agent, another server instance) may write:
 * one timer for all of them, and the log is read only when the store says someone else committed
 * since the last look ({@link TaskRepository.logVersion}) — or once for a task just followed.
 * Thousands of idle subscriptions then cost one cheap check per tick instead of a query per task
 * per tick. A store that can tell which task changed ({@link TaskRepository.watch}, PostgreSQL)
 * wakes the follower at once for that task, and no polling is needed.
 */
export class TaskLogFollower {
  private readonly followed = new Map<string, FollowedTask>();
  /** Followed since the last tick: read once whatever the version says. */
  private readonly fresh = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private seenVersion: unknown;
  /** Subscribed to the store's notifications (when it has them). */
  private watching: Promise<unknown> | undefined;
  private soon = false;

  private readonly tasks: TaskRepository;
  private readonly logger: Logger;
  private readonly everyMs: number;

  constructor(tasks: TaskRepository, logger: Logger, everyMs = 200) {
    this.tasks = tasks;
    this.logger = logger;
    this.everyMs = everyMs;
  }

  /** Follows a task; `readNow` (default) reads its log once at the next tick whatever changed. */
  follow(taskId: string, task: FollowedTask, readNow = true): void {
    this.followed.set(taskId, task);
    if (readNow) this.fresh.add(taskId);
    if (this.tasks.watch) {
      this.watching ??= this.tasks
        .watch((id, seq) => this.notified(id, seq))
        .catch((err: unknown) => {
          this.logger.warn({ err }, 'watching the task log failed; following by polling');
          this.watching = undefined;
        });
      if (readNow) this.tickSoon();
      return;
    }
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.everyMs);
      this.timer.unref();
    }
  }

  /** The store committed events of a task (or '' : of any task, look at all again). */
  private notified(taskId: string, seq: number): void {
    if (taskId === '') {
      for (const id of this.followed.keys()) this.fresh.add(id);
    } else {
      const task = this.followed.get(taskId);
      // Our own writes come back too: they are already applied.
      if (!task || seq <= task.after()) return;
      this.fresh.add(taskId);
    }
    this.tickSoon();
  }

  private tickSoon(): void {
    if (this.soon) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      void this.tick().then(() => {
        // Woken while the last tick ran: read again.
        if (this.fresh.size > 0 && !this.soon) this.tickSoon();
      });
    });
  }

  unfollow(taskId: string): void {
    if (!this.followed.delete(taskId)) return;
    this.fresh.delete(taskId);
    if (this.followed.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.seenVersion = undefined;
    }
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const watched = this.tasks.watch !== undefined;
      const version = !watched && this.tasks.logVersion ? await this.tasks.logVersion() : undefined;
      const changed = !watched && (version === undefined || version !== this.seenVersion);
      this.seenVersion = version;
      const ids = changed ? [...this.followed.keys()] : [...this.fresh];
      this.fresh.clear();
      for (const id of ids) {
        const task = this.followed.get(id);
        if (!task) continue;
        try {
          const events = await this.tasks.eventsAfter(id, task.after());
          if (!task.apply(events) && this.followed.get(id) === task) this.unfollow(id);
        } catch (err) {
          this.logger.warn({ err, taskId: id }, 'following the task log failed');
        }
      }
    } catch (err) {
      this.logger.warn({ err }, 'following the task log failed');
    } finally {
      this.busy = false;
    }
  }
}
