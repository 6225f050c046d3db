import { applyEvent, isInterrupted, isTerminal, type Task, type TaskEvent } from '../../domain/a2a.model.ts';
import { Channel } from '../../domain/async-channel.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import { assertOwner, taskNotFound } from './task.errors.ts';
import { TaskLogFollower } from './task-log.follower.ts';
import type { StreamItem } from './task.types.ts';
import { TurnAbort } from './turn-abort.ts';

/** A task held in memory: it has a running turn or a subscriber. */
export interface LiveTask {
  task: Task;
  owner: string;
  seq: number;
  listeners: Set<(item: StreamItem) => void>;
  /** Persistence then broadcast, strictly in event order. */
  chain: Promise<void>;
  /** Events recorded but not yet stored and delivered (how far the actor runs ahead). */
  backlog: number;
  /** Set once storing an event failed: the actor learns it at its next event. */
  failure?: unknown;
  /** The failure has been answered to a caller or logged: it is not logged again. */
  failureReported?: boolean;
  /** Another process finished the task (e.g. a cancel from another CLI) while a turn ran here. */
  overtaken?: boolean;
  /** How often a status of this process was written again after another process's events. */
  rebases?: number;
  /** Events this process stored after the task's last stored snapshot (see TaskEventRecorder.record). */
  sinceSnapshot?: number;
  /** Actor turns, one after another. */
  turns: Promise<void>;
  running: number;
  abort: TurnAbort;
  turnEndWaiters: Set<() => void>;
}

/** A stored event as a stream item; with `eventJson` (the event as stored), the item's JSON too. */
export function toItem(ev: TaskEvent, eventJson?: string): StreamItem {
  const item: StreamItem =
    ev.kind === 'status'
      ? { seq: ev.seq, payload: { statusUpdate: ev.event } }
      : { seq: ev.seq, payload: { artifactUpdate: ev.event } };
  if (eventJson !== undefined)
    item.json = `{"${ev.kind === 'status' ? 'statusUpdate' : 'artifactUpdate'}":${eventJson}}`;
  return item;
}

/**
 * The registry of live tasks: loads a task into memory when a caller needs it (checking the caller
 * may see it), keeps it while a turn runs or someone listens, follows the log for tasks another
 * process runs, and releases it once nothing needs it.
 */
export class LiveTasks {
  private readonly live = new Map<string, LiveTask>();
  private readonly loading = new Map<string, Promise<LiveTask>>();
  /** Reads the log for tasks another process may be running (see follow()). */
  private readonly follower: TaskLogFollower;

  private readonly tasks: TaskRepository;

  /** What to do when another process finished a task whose turn runs here (see follow()). */
  private readonly onOvertaken: ((live: LiveTask) => void) | undefined;

  constructor(tasks: TaskRepository, logger: Logger, onOvertaken?: (live: LiveTask) => void) {
    this.tasks = tasks;
    this.onOvertaken = onOvertaken;
    this.follower = new TaskLogFollower(tasks, logger);
  }

  get(id: string): LiveTask | undefined {
    return this.live.get(id);
  }

  /** Whether a task has a running turn or a subscriber here (retention never deletes it). */
  has(id: string): boolean {
    return this.live.has(id) || this.loading.has(id);
  }

  get size(): number {
    return this.live.size;
  }

  all(): LiveTask[] {
    return [...this.live.values()];
  }

  /** Forgets `live` at once (when it is still the task's entry). */
  drop(live: LiveTask): void {
    if (this.live.get(live.task.id) === live) this.live.delete(live.task.id);
  }

  register(task: Task, owner: string, seq: number): LiveTask {
    const live: LiveTask = {
      task,
      owner,
      seq,
      listeners: new Set(),
      chain: Promise.resolve(),
      backlog: 0,
      turns: Promise.resolve(),
      running: 0,
      abort: new TurnAbort(),
      turnEndWaiters: new Set(),
    };
    this.live.set(task.id, live);
    return live;
  }

  /** The in-memory task, loading it from the store when needed; checks the caller may see it. */
  async acquire(id: string, principal: Principal): Promise<LiveTask> {
    let live = this.live.get(id);
    if (!live) {
      let pending = this.loading.get(id);
      if (!pending) {
        pending = this.tasks.get(id).then((stored) => {
          if (!stored) throw taskNotFound(id);
          return this.live.get(id) ?? this.register(stored.task, stored.owner, stored.seq);
        });
        this.loading.set(id, pending);
        pending.then(
          () => this.loading.delete(id),
          () => this.loading.delete(id),
        );
      }
      live = await pending;
    }
    assertOwner(live.owner, principal, id);
    return live;
  }

  /**
   * Another process (local mode: one agent per CLI call; server mode: another instance) may write
   * a task watched here. Until a turn runs here, new events are read from the log and delivered.
   * While a turn runs here the log is watched too: when another process finished the task (a
   * CancelTask that reached another instance), `onOvertaken` stops the turn at once rather than at
   * its next event.
   */
  follow(live: LiveTask, opts: { readNow?: boolean } = {}): void {
    this.follower.follow(
      live.task.id,
      {
        after: () => live.seq,
        apply: (events) => {
          for (const ev of events) {
            if (ev.seq <= live.seq) continue;
            if (live.running > 0) {
              if (ev.kind === 'status' && isTerminal(ev.event.status.state) && !live.overtaken)
                this.onOvertaken?.(live);
              continue;
            }
            applyEvent(live.task, ev);
            live.seq = ev.seq;
            const item = toItem(ev);
            for (const l of [...live.listeners]) l(item);
          }
          return !isTerminal(live.task.status.state) && (live.listeners.size > 0 || live.running > 0);
        },
      },
      opts.readNow ?? true,
    );
  }

  unfollow(live: LiveTask): void {
    this.follower.unfollow(live.task.id);
  }

  /** Releases the task from memory once it has no listener and no turn, after its pending writes. */
  release(live: LiveTask): void {
    if (live.listeners.size > 0 || live.running > 0) return;
    const release = (): void => {
      if (live.listeners.size === 0 && live.running === 0 && this.live.get(live.task.id) === live) {
        this.unfollow(live);
        this.live.delete(live.task.id);
      }
    };
    // After a failed store too: the next caller then reads what the store really holds.
    void live.chain.then(release, release);
  }

  /** Resolves once the task is terminal or interrupted, or the current turn ends. */
  waitSettled(live: LiveTask): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        live.listeners.delete(listener);
        live.turnEndWaiters.delete(done);
        resolve();
      };
      const listener = (item: StreamItem): void => {
        const st = 'statusUpdate' in item.payload ? item.payload.statusUpdate.status.state : undefined;
        if (st && (isTerminal(st) || isInterrupted(st))) done();
      };
      live.listeners.add(listener);
      live.turnEndWaiters.add(done);
    });
  }

  /** A stream of the task's delivered events; closing it releases the task. */
  openChannel(live: LiveTask, opts: { closeOnInterrupt: boolean; closeOnTurnEnd: boolean }): Channel<StreamItem> {
    // A turn whose events could not be stored ends its stream with that error, not silently.
    const onTurnEnd = (): void => (live.failure !== undefined ? ch.fail(live.failure) : ch.end());
    const listener = (item: StreamItem): void => {
      ch.push(item);
      const st = 'statusUpdate' in item.payload ? item.payload.statusUpdate.status.state : undefined;
      if (st && (isTerminal(st) || (opts.closeOnInterrupt && isInterrupted(st)))) ch.end();
    };
    const ch: Channel<StreamItem> = new Channel<StreamItem>(() => {
      live.listeners.delete(listener);
      live.turnEndWaiters.delete(onTurnEnd);
      this.release(live);
    });
    live.listeners.add(listener);
    if (opts.closeOnTurnEnd) live.turnEndWaiters.add(onTurnEnd);
    return ch;
  }
}
