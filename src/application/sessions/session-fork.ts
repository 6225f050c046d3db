import type { Task } from '../../domain/a2a.model.ts';
import { isTerminal } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import type { StoredTask } from '../ports/task.repository.port.ts';

/** The most turns one fork copies. */
export const MAX_FORK_TURNS = 5000;

/**
 * A deep copy of a JSON value with every string that is a key of `ids` replaced by its value: the
 * old task and session ids wherever a task, its metadata or its transcript names them (a message's
 * taskId and contextId, a compaction's `covers`, …). Ids are ULIDs, so no other text is equal to one.
 */
export function remapIds<T>(value: T, ids: ReadonlyMap<string, string>): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return ids.get(v) ?? v;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * The turns a fork copies: up to and including `atTaskId` (default: all), every one finished.
 * Refuses a task that is not a turn of the session, and a turn still running or waiting.
 */
export function turnsToCopy(sessionId: string, turns: readonly StoredTask[], atTaskId: string | undefined): Task[] {
  let end = turns.length;
  if (atTaskId !== undefined) {
    end = turns.findIndex((s) => s.task.id === atTaskId) + 1;
    if (end === 0) {
      throw new AppError('INVALID_PARAMS', `Task ${atTaskId} is not a turn of session ${sessionId}`, {
        fields: [{ field: 'atTaskId', description: `must be a task of session ${sessionId}` }],
        hint: `its turns are listed by agents session show ${sessionId}`,
      });
    }
  }
  const copied = turns.slice(0, end).map((s) => s.task);
  const open = copied.find((t) => !isTerminal(t.status.state));
  if (open) {
    const state = open.status.state.replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
    throw new AppError(
      'INVALID_STATE',
      `Turn ${open.id} of session ${sessionId} is ${state}: only finished turns can be copied into a fork`,
      {
        details: { sessionId, taskId: open.id, state: open.status.state },
        hint: 'wait for it to finish (or cancel it), or fork at an earlier turn with --at <task-id>',
      },
    );
  }
  return copied;
}

/** The title of a fork: the one asked for, else the original's marked as a fork (within 200 characters). */
export function forkTitle(asked: string | undefined, original: string | undefined): string | undefined {
  if (asked !== undefined) return asked;
  if (original === undefined) return undefined;
  const suffix = ' (fork)';
  return original.length + suffix.length > 200
    ? `${original.slice(0, 200 - suffix.length)}${suffix}`
    : original + suffix;
}
