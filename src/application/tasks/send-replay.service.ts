import { isInterrupted, isTerminal } from '../../domain/a2a.model.ts';
import type { Principal } from '../ports/principal.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { LiveTask, LiveTasks } from './live-tasks.service.ts';
import { viewTask } from './task.views.ts';
import type { SendInput, SendResult, StreamItem } from './task.types.ts';

/** Answers a retry of a message already sent from the task it started; starts no turn. */
export class SendReplay {
  private readonly tasks: Pick<TaskRepository, 'get'>;
  private readonly live: LiveTasks;

  constructor(tasks: Pick<TaskRepository, 'get'>, live: LiveTasks) {
    this.tasks = tasks;
    this.live = live;
  }

  /** A blocking retry waits for the task to settle as the first send did; returnImmediately answers at once. */
  async send(taskId: string, input: SendInput, principal: Principal): Promise<SendResult> {
    const live = await this.live.acquire(taskId, principal);
    try {
      const st = live.task.status.state;
      if (
        input.configuration?.returnImmediately !== true &&
        !isTerminal(st) &&
        !isInterrupted(st) &&
        (await this.turnRuns(live))
      ) {
        const settled = this.live.waitSettled(live);
        // Run by another process (local mode): its events come through the log.
        if (live.running === 0) this.live.follow(live);
        await settled;
      }
      return { task: viewTask(live.task, { historyLength: input.configuration?.historyLength }) };
    } finally {
      this.live.release(live);
    }
  }

  /** A streaming retry: the task as it stands (its snapshot with every logged event), then live events until it settles. */
  async stream(taskId: string, input: SendInput, principal: Principal): Promise<AsyncIterable<StreamItem>> {
    const live = await this.live.acquire(taskId, principal);
    const st = live.task.status.state;
    const runs = !isTerminal(st) && !isInterrupted(st) && (await this.turnRuns(live));
    const ch = this.live.openChannel(live, { closeOnInterrupt: true, closeOnTurnEnd: live.running > 0 });
    ch.push({
      seq: live.seq,
      payload: { task: viewTask(live.task, { historyLength: input.configuration?.historyLength }) },
    });
    if (!runs) ch.end();
    else if (live.running === 0) this.live.follow(live);
    return ch;
  }

  /**
   * Whether a turn of the task runs, here or in another process. An actor may end its turn and
   * leave the task working: then the first send answered at the turn's end, and so does a resend.
   * (A turn whose process died is settled within a lease period, which ends a wait on it.)
   */
  private async turnRuns(live: LiveTask): Promise<boolean> {
    if (live.running > 0) return true;
    const stored = await this.tasks.get(live.task.id);
    return stored?.runnerId !== undefined && stored.runnerId !== null;
  }
}
