/**
 * Following a task's stream to its end, for every front end: the stream, resubscribed when it
 * ends early (an interruption, a dropped connection), with the task read in between, and the
 * events folded into a snapshot as the agent keeps its stored task.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { isTerminal, type StreamResponse, type Task } from '../../domain/a2a.model.ts';
import { getTask, subscribeToTask } from '../a2a/contracts/task.contract.ts';
import type { A2AClient } from './client.ts';
import { A2AClientError } from './client-error.ts';

/**
 * Folds one stream event into a task snapshot, as the agent does for its stored task: status
 * replaces, artifacts append (append=true) or replace by artifactId.
 */
export function foldEvent(task: Task | undefined, ev: StreamResponse): Task | undefined {
  if ('task' in ev) return structuredClone(ev.task);
  if (!task) return task;
  if ('statusUpdate' in ev) {
    task.status = ev.statusUpdate.status;
    // What the agent keeps on the task comes with the event that settles it (e.g. token usage).
    for (const key of ['usage', 'fallbacks']) {
      const kept = ev.statusUpdate.metadata?.[key];
      if (kept !== undefined) task.metadata = { ...task.metadata, [key]: kept };
    }
    if (ev.statusUpdate.status.message) (task.history ??= []).push(ev.statusUpdate.status.message);
  } else if ('artifactUpdate' in ev) {
    const { artifact, append } = ev.artifactUpdate;
    const artifacts = (task.artifacts ??= []);
    const existing = artifacts.find((a) => a.artifactId === artifact.artifactId);
    if (append && existing) existing.parts.push(...structuredClone(artifact.parts));
    else if (existing) Object.assign(existing, structuredClone(artifact));
    else artifacts.push(structuredClone(artifact));
  }
  return task;
}

/** The status an event carries, if any (a status update's, or a snapshot's). */
export const statusOf = (ev: StreamResponse): Task['status'] | undefined =>
  'statusUpdate' in ev ? ev.statusUpdate.status : 'task' in ev ? ev.task.status : undefined;

/** What a follower of a task does with what the task reports. */
export interface TaskWatcher {
  /** Every event of the task's stream, as it arrives (with its status, if it carries one). */
  event(seq: number, event: StreamResponse, status: Task['status'] | undefined): void | Promise<void>;
  /** The stream ended (the task ended, or the connection closed at an interruption). */
  streamEnded?(): void;
  /** The task as read after its stream ended early. */
  snapshot(task: Task): void | Promise<void>;
  /** The task waits for input: true once answered (following goes on), false to stop following. */
  input(status: Task['status']): Promise<boolean>;
  /** The error to throw when the connection to the agent is lost. */
  lost(err: unknown): Error;
}

/** Follows a task to its end (or to an input it does not answer). */
export async function watchTask(client: A2AClient, taskId: string, signal: AbortSignal, w: TaskWatcher): Promise<void> {
  for (;;) {
    let ended = false;
    let received = 0;
    // Leaving a subscription early must close it: over HTTP only an abort ends the SSE request
    // (the client does not cancel the body when the loop stops), and it would keep us alive.
    const sub = new AbortController();
    const stop = (): void => sub.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const { seq, event } of client.stream(subscribeToTask, { id: taskId }, { signal: sub.signal })) {
        received++;
        const status = statusOf(event);
        await w.event(seq, event, status);
        if (!status) continue;
        if (status.state === 'TASK_STATE_INPUT_REQUIRED' && !(await w.input(status))) return;
        if (isTerminal(status.state)) {
          ended = true;
          break;
        }
      }
    } catch (err) {
      // A task that ended before we subscribed cannot be subscribed to: its history has it all.
      // A stream the server ended as unavailable after it began (it is shutting down: its last
      // event says so) is an interruption: the task is read and subscribed to again, wherever a
      // balancer sends us; a server that is gone is then reported as lost.
      const interrupted = received > 0 && err instanceof A2AClientError && err.reason === 'UNAVAILABLE';
      if (interrupted || (err instanceof A2AClientError && err.type === 'UnsupportedOperationError')) {
        // read below
      } else if (!(err instanceof A2AClientError) && !signal.aborted) throw w.lost(err);
      else throw err;
    } finally {
      signal.removeEventListener('abort', stop);
      sub.abort();
    }
    w.streamEnded?.();
    if (ended) return;
    const t = await client.call(getTask, { id: taskId }, { signal }).catch((err: unknown) => {
      throw err instanceof A2AClientError || signal.aborted ? err : w.lost(err);
    });
    await w.snapshot(t);
    if (isTerminal(t.status.state)) return;
    if (t.status.state === 'TASK_STATE_INPUT_REQUIRED' && !(await w.input(t.status))) return;
    await delay(200, undefined, { signal }); // then subscribe again, without hammering
  }
}
