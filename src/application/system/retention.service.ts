import type { Logger } from '../ports/logger.port.ts';
import type { SessionRepository } from '../ports/session.repository.port.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';

/** What retention keeps. Either limit may be absent; with neither, nothing is deleted. */
export interface RetentionPolicy {
  /** Terminal tasks (with their event logs) and idle sessions older than this many days go. */
  maxAgeDays?: number;
  /** At most this many terminal tasks are kept; the oldest beyond it go. */
  maxTasks?: number;
}

export interface SweepResult {
  tasksDeleted: number;
  sessionsDeleted: number;
}

export interface RetentionDeps {
  tasks: TaskRepository;
  sessions: SessionRepository;
  /** True while a task has a running turn or a subscriber in this process. */
  isLive(taskId: string): boolean;
  logger: Logger;
  now?: () => Date;
}

const DAY_MS = 24 * 60 * 60_000;
/** Rows per transaction: a sweep never holds the store for long. */
const BATCH = 500;
/** Batches per sweep at most (bounded work; the next sweep goes on). */
const MAX_BATCHES = 200;

/**
 * Retention: deletes finished tasks and dead sessions past the policy, in small batches, never a
 * live or unfinished task nor a plan's. The sweeper runs it on an unref'd timer; a failing sweep is
 * logged and tried again at the next tick.
 */
export class RetentionService {
  private readonly now: () => Date;
  private running: Promise<SweepResult> | undefined;

  private readonly deps: RetentionDeps;

  constructor(deps: RetentionDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /** One sweep (a sweep already running is joined, not doubled). */
  sweep(policy: RetentionPolicy): Promise<SweepResult> {
    this.running ??= this.sweepOnce(policy).finally(() => (this.running = undefined));
    return this.running;
  }

  /** A sweep whose failure is logged, not thrown (what the timer runs). */
  async sweepContained(policy: RetentionPolicy): Promise<SweepResult | undefined> {
    try {
      const r = await this.sweep(policy);
      if (r.tasksDeleted > 0 || r.sessionsDeleted > 0) this.deps.logger.info({ ...r, policy }, 'retention sweep');
      return r;
    } catch (err) {
      this.deps.logger.error({ err }, 'retention sweep failed; it is tried again at the next sweep');
      return undefined;
    }
  }

  /** Sweeps after `firstMs`, then every `everyMs`, on unref'd timers. Returns the stop function. */
  start(policy: RetentionPolicy, timing: { firstMs: number; everyMs: number }): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const tick = (delay: number): void => {
      timer = setTimeout(() => {
        void this.sweepContained(policy).finally(() => {
          if (!stopped) tick(timing.everyMs);
        });
      }, delay);
      timer.unref();
    };
    tick(timing.firstMs);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

  private async sweepOnce(policy: RetentionPolicy): Promise<SweepResult> {
    const result: SweepResult = { tasksDeleted: 0, sessionsDeleted: 0 };
    const age = policy.maxAgeDays !== undefined && policy.maxAgeDays > 0 ? policy.maxAgeDays : undefined;
    const keep = policy.maxTasks !== undefined && policy.maxTasks > 0 ? policy.maxTasks : undefined;
    if (age === undefined && keep === undefined) return result;
    const before = age !== undefined ? new Date(this.now().getTime() - age * DAY_MS).toISOString() : undefined;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const n = await this.deps.tasks.deleteExpired({
        before,
        keep,
        limit: BATCH,
        isLive: (id) => this.deps.isLive(id),
      });
      result.tasksDeleted += n;
      if (n < BATCH) break;
    }
    // A session is dead once its tasks are gone and it has been idle for the whole window.
    if (before !== undefined) {
      for (let i = 0; i < MAX_BATCHES; i++) {
        const n = await this.deps.sessions.deleteIdle(before, BATCH);
        result.sessionsDeleted += n;
        if (n < BATCH) break;
      }
    }
    return result;
  }
}
