import { isInterrupted, isTerminal, type TaskState } from '../../domain/a2a.model.ts';
import type { Logger } from '../ports/logger.port.ts';
import { systemPrincipalFor, type Principal } from '../ports/principal.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { LiveTasks } from './live-tasks.service.ts';
import type { TaskEventRecorder } from './task-event.recorder.ts';

export interface StrandedTasksDeps {
  tasks: Pick<TaskRepository, 'get' | 'listRunning'>;
  live: LiveTasks;
  recorder: TaskEventRecorder;
  logger: Logger;
}

/** Ends tasks that nothing runs any more (their process stopped mid-turn) as failed. */
export class StrandedTasks {
  private readonly deps: StrandedTasksDeps;

  constructor(deps: StrandedTasksDeps) {
    this.deps = deps;
  }

  /** Ends one task as failed with `text`, unless it is already terminal. */
  async fail(id: string, text: string, principal: Principal): Promise<void> {
    await this.failIf(id, principal, text, (st) => !isTerminal(st));
  }

  /**
   * Ends as FAILED (with `text` as the status message) every task still submitted or working
   * that no live process runs: not a turn of this process, and its runner is not live. Its
   * subscribers — here, or following the log elsewhere — get the final event. Returns the ids.
   */
  async settle(isLive: (runnerId: string) => Promise<boolean>, text: string): Promise<string[]> {
    const settled: string[] = [];
    for (const t of await this.deps.tasks.listRunning()) {
      if ((this.deps.live.get(t.id)?.running ?? 0) > 0) continue;
      if (await isLive(t.runnerId)) continue;
      try {
        // The platform acts for the task's owner here.
        const stranded = await this.failIf(
          t.id,
          systemPrincipalFor(t.owner),
          text,
          (st, running) => !isTerminal(st) && !isInterrupted(st) && running === 0,
        );
        if (stranded) settled.push(t.id);
      } catch (err) {
        // E.g. another process settled it at the same moment (its event took the sequence number).
        this.deps.logger.warn({ err, taskId: t.id }, 'settling a stranded task failed');
      }
    }
    return settled;
  }

  /**
   * True when no live process runs the task any more: what it left behind is nobody's. 'missing'
   * when no such task is stored — it may be a task another process is about to store.
   */
  async isStranded(
    taskId: string,
    isLive: (runnerId: string | null) => Promise<boolean>,
  ): Promise<boolean | 'missing'> {
    if ((this.deps.live.get(taskId)?.running ?? 0) > 0) return false;
    const stored = await this.deps.tasks.get(taskId);
    if (!stored) return 'missing';
    return !(await isLive(stored.runnerId ?? null));
  }

  /** Aborts the task and ends it FAILED when `applies` to its state; returns whether it did. */
  private async failIf(
    id: string,
    owner: Principal,
    text: string,
    applies: (state: TaskState, running: number) => boolean,
  ): Promise<boolean> {
    const { live: registry, recorder } = this.deps;
    const live = await registry.acquire(id, owner);
    try {
      if (!applies(live.task.status.state, live.running)) return false;
      live.abort.abort();
      await recorder.status(live, 'TASK_STATE_FAILED', text, true);
      return true;
    } finally {
      registry.release(live);
    }
  }
}
