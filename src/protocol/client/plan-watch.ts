/**
 * Watching a plan a person looks at (the TUI's plan view): unlike followPlan, which drives one
 * phase to its next stop and answers its approvals, a watch only reports — the plan's status when
 * its task's events say it moved, across phases, and through an approval it waits for (answered
 * here or anywhere else) — until the plan stops running or the watcher's signal is aborted.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Task } from '../../domain/a2a.model.ts';
import { planStatus } from '../a2a/contracts/plan.contract.ts';
import type { ResultOf } from '../a2a/contract.ts';
import type { A2AClient } from './client.ts';
import { foldEvent, watchTask } from './task-follow.ts';

export type WatchedPlanStatus = ResultOf<typeof planStatus>;

/** What a front end does with what watching a plan reports. */
export interface PlanWatcher {
  /** The plan's status: read at the start, after each status event of its running task, and at the end. */
  status(s: WatchedPlanStatus): void | Promise<void>;
  /** The running phase's task, as its events fold it (after every event: its artifacts grow). */
  task?(t: Task): void | Promise<void>;
  /** The error to throw when the connection to the agent is lost. */
  lost(err: unknown): Error;
}

/**
 * The task the plan's run is on now: the one that waits for an answer, else, while a phase runs,
 * the phase's task; undefined when nothing runs (nothing to watch until someone starts a phase).
 */
export function runningTaskOf(s: WatchedPlanStatus): string | undefined {
  if (s.waiting) return s.waiting.taskId;
  if (!s.running) return undefined;
  return (s.tasks as Record<string, string | undefined>)[s.phase];
}

/**
 * Watches a plan until it stops running (or `signal` aborts, e.g. its view closed): follows the
 * task of each phase it runs in turn, and reads the plan's status whenever the task's status
 * changes. Never answers an approval: a waiting task is watched on until someone answers it.
 * Resolves when the plan stops running or `signal` aborts; rejects when a read fails.
 */
export async function watchPlan(client: A2AClient, planId: string, signal: AbortSignal, w: PlanWatcher): Promise<void> {
  try {
    await watch(client, planId, signal, w);
  } catch (err) {
    // Stopped by its owner (the view closed): nothing went wrong.
    if (!signal.aborted) throw err;
  }
}

async function watch(client: A2AClient, planId: string, signal: AbortSignal, w: PlanWatcher): Promise<void> {
  const read = async (): Promise<WatchedPlanStatus> => {
    const s = await client.call(planStatus, { planId }, { signal });
    await w.status(s);
    return s;
  };
  let followed: string | undefined;
  let s = await read();
  for (;;) {
    const taskId = runningTaskOf(s);
    // The task just followed ended; a status that still names it was read before the plan moved on.
    if (signal.aborted || taskId === undefined || taskId === followed) return;
    followed = taskId;
    let task: Task | undefined;
    await watchTask(client, taskId, signal, {
      event: async (_seq, event, status) => {
        task = foldEvent(task, event);
        if (task) await w.task?.(task);
        if (status && !signal.aborted) await read();
      },
      snapshot: async (t) => {
        task = t;
        await w.task?.(t);
        await read();
      },
      // Someone (this front end, another one, the CLI) answers; the stream goes on after it.
      input: () => Promise.resolve(true),
      lost: (err) => w.lost(err),
    });
    if (signal.aborted) return;
    s = await settled(read, taskId, signal);
  }
}

/** How many times, and how far apart, the status is read again while it still names a task that ended. */
const SETTLE_READS = 5;
const SETTLE_MS = 200;

/**
 * The plan's status once its run let go of the task that ended: the task's last event is sent
 * from inside the run, which marks the plan as no longer running just after; a read in between
 * would leave the view saying "running" for good.
 */
async function settled(
  read: () => Promise<WatchedPlanStatus>,
  ended: string,
  signal: AbortSignal,
): Promise<WatchedPlanStatus> {
  let s = await read();
  for (let i = 0; i < SETTLE_READS && runningTaskOf(s) === ended && !s.waiting; i++) {
    await delay(SETTLE_MS, undefined, { signal });
    s = await read();
  }
  return s;
}
