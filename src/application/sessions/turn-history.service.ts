import { createHash } from 'node:crypto';
import { isTerminal } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import type { TurnChange, UndoOutcome } from '../../domain/session.ts';
import type { SessionDiff, SessionDiffFile } from '../../domain/session-views.ts';
import type { FileHistory } from '../ports/file-history.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { SessionRepository } from '../ports/session.repository.port.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { TurnChangeRecord, TurnChangeRepository } from '../ports/turn-change.repository.port.ts';
import type { TurnCheckpoints, TurnRef } from '../ports/turn-checkpoints.port.ts';
import { textDiff } from './session-diff.ts';
import { ownedSession } from './session.service.ts';

/** Records of running turns kept in memory (a turn's later writes find its record without a query). */
const OPEN_TURNS = 256;

export interface TurnHistoryDeps {
  files: FileHistory;
  records: TurnChangeRepository;
  sessions: SessionRepository;
  tasks: TaskRepository;
  now?: () => Date;
}

export interface UndoRequest {
  /** The turn to undo (1-based, as `session show` numbers them); it and every later turn are undone. */
  turn?: number | undefined;
  /** Overwrite files changed outside the agent since. */
  force?: boolean | undefined;
}

/** A record with its turn's number. */
interface Numbered {
  turn: number;
  record: TurnChangeRecord;
}

/**
 * The undo history of chat turns. The agent loop calls {@link before} before each write of a turn
 * and {@link after} after it (the {@link TurnCheckpoints} port): the first `before` of a turn
 * snapshots the project's files, each `after` snapshots them again and records which files differ.
 * `undo` puts the files of a turn — and of every later one — back as they were before it.
 */
export class TurnHistoryService implements TurnCheckpoints {
  readonly #deps: TurnHistoryDeps;
  readonly #now: () => Date;
  readonly #open = new Map<string, Promise<TurnChangeRecord>>();

  constructor(deps: TurnHistoryDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  async before(turn: TurnRef): Promise<void> {
    await this.#record(turn, true);
  }

  async after(turn: TurnRef): Promise<string[]> {
    const rec = await this.#record(turn, false);
    const { snapshot, files } = await this.#deps.files.changedSince(rec.root, rec.before, keep(turn.task, 'after'));
    await this.#deps.records.recordAfter(rec.taskId, rec.root, snapshot, files);
    rec.after = snapshot;
    rec.files = files;
    return files;
  }

  /** The turns of the caller's session that changed files, oldest first. */
  async changes(principal: Principal, ref: string): Promise<TurnChange[]> {
    const { id } = await ownedSession(this.#deps.sessions, ref, principal);
    return this.changesOf(id);
  }

  /** {@link changes} without the owner check (the caller has made it). */
  async changesOf(sessionId: string): Promise<TurnChange[]> {
    const records = await this.#deps.records.listBySession(sessionId);
    if (records.length === 0) return [];
    return summarise(numbered(records, await this.#turns(sessionId)));
  }

  /**
   * Puts back the files that turn `turn` (default: the newest turn that changed files and is not
   * undone) and every later turn changed, as they were before it; refuses (REVISION_CONFLICT,
   * naming them) when one was changed outside the agent since, unless `force`.
   */
  async undo(principal: Principal, ref: string, req: UndoRequest = {}): Promise<UndoOutcome> {
    const { id: sessionId } = await ownedSession(this.#deps.sessions, ref, principal);
    const turns = await this.#turns(sessionId);
    if (turns.some((t) => t.live))
      throw new AppError('INVALID_STATE', `Session ${sessionId} has a turn running: undo once it has finished`, {
        details: { sessionId },
        hint: 'wait for the turn, or cancel it (agents task cancel)',
      });
    const all = numbered(await this.#deps.records.listBySession(sessionId), turns).filter(
      (n) => n.record.after !== undefined && n.record.files.length > 0,
    );
    const pending = all.filter((n) => n.record.undoneAt === undefined);
    const from = req.turn ?? pending.at(-1)?.turn;
    if (from === undefined)
      throw new AppError('INVALID_STATE', `Session ${sessionId} has no turn left to undo`, {
        details: { sessionId },
        hint: `agents session show ${sessionId} lists which turns changed files`,
      });
    if (from > turns.length)
      throw new AppError('NOT_FOUND', `Session ${sessionId} has no turn ${from} (it has ${turns.length})`, {
        details: { entity: 'turn', sessionId, turn: from },
      });
    const range = pending.filter((n) => n.turn >= from);
    if (range.length === 0) {
      const undone = all.some((n) => n.turn === from);
      throw new AppError(
        'INVALID_STATE',
        undone
          ? `Turn ${from} of session ${sessionId} was already undone`
          : `Turn ${from} of session ${sessionId} and the turns after it changed no files`,
        { details: { sessionId, turn: from } },
      );
    }
    const overwritten = await this.#conflicts(range);
    if (overwritten.length > 0 && req.force !== true)
      throw new AppError(
        'REVISION_CONFLICT',
        `${overwritten.length === 1 ? 'A file was' : `${overwritten.length} files were`} changed outside the agent since turn ${range[0]?.turn ?? from}: ${overwritten.join(', ')}`,
        {
          details: { sessionId, turn: from, files: overwritten },
          hint: 'undo with --force to overwrite them with their content from before the turn',
        },
      );
    const files = new Set<string>();
    for (const [root, restores] of plan(range, (r) => r.before, 'earliest'))
      for (const [snapshot, paths] of restores) {
        await this.#deps.files.restore(root, snapshot, paths);
        for (const p of paths) files.add(p);
      }
    const at = this.#now().toISOString();
    await this.#deps.records.markUndone(
      range.map((n) => n.record),
      at,
    );
    for (const n of range) n.record.undoneAt = at;
    return { sessionId, turns: summarise(range), files: [...files].sort(), overwritten };
  }

  /**
   * What the session's turns changed, file by file: with `turn`, that turn's own change (its
   * files before and after it); without, every turn not undone — each file from before the
   * earliest of them that changed it to the file as it is now, marked when it was changed outside
   * the agent since the last of them wrote it.
   */
  async diff(principal: Principal, ref: string, turn?: number): Promise<SessionDiff> {
    const { id: sessionId } = await ownedSession(this.#deps.sessions, ref, principal);
    const turns = await this.#turns(sessionId);
    if (turn !== undefined && turn > turns.length)
      throw new AppError('NOT_FOUND', `Session ${sessionId} has no turn ${turn} (it has ${turns.length})`, {
        details: { entity: 'turn', sessionId, turn },
      });
    const written = numbered(await this.#deps.records.listBySession(sessionId), turns).filter(
      (n) => n.record.after !== undefined && n.record.files.length > 0,
    );
    const range = written.filter((n) => n.record.undoneAt === undefined && (turn === undefined || n.turn === turn));
    if (turn !== undefined && range.length === 0 && written.some((n) => n.turn === turn))
      throw new AppError('INVALID_STATE', `Turn ${turn} of session ${sessionId} was undone: its changes are gone`, {
        details: { sessionId, turn },
        hint: `agents session diff ${sessionId} shows what the turns not undone changed`,
      });
    const parts: Array<{ file: SessionDiffFile; unified: string }> = [];
    for (const [root, group] of byRoot(range)) parts.push(...(await this.#diffIn(root, group, turn !== undefined)));
    parts.sort((a, b) => diffPath(a.file).localeCompare(diffPath(b.file)));
    return {
      sessionId,
      ...(turn !== undefined ? { turn } : {}),
      files: parts.map((p) => p.file),
      unified: parts.map((p) => p.unified).join(''),
    };
  }

  /** The files of one directory's records: before the earliest, after the latest (or as now). */
  async #diffIn(
    root: string,
    range: readonly Numbered[],
    oneTurn: boolean,
  ): Promise<Array<{ file: SessionDiffFile; unified: string }>> {
    const files = new Map<string, { first: TurnChangeRecord; last: TurnChangeRecord; turns: number[] }>();
    for (const { turn, record } of range)
      for (const f of record.files) {
        const seen = files.get(f);
        if (seen) {
          seen.last = record;
          seen.turns.push(turn);
        } else files.set(f, { first: record, last: record, turns: [turn] });
      }
    const read = (at: string | undefined, paths: string[]) => this.#deps.files.read(root, at, paths);
    const before = new Map<string, string>();
    for (const [snapshot, paths] of bySnapshot(files, (e) => e.first.before))
      for (const [f, text] of await read(snapshot, paths)) before.set(f, text);
    const after = new Map<string, string>();
    const outside = new Set<string>();
    if (oneTurn) {
      for (const [snapshot, paths] of bySnapshot(files, (e) => e.last.after ?? e.last.before))
        for (const [f, text] of await read(snapshot, paths)) after.set(f, text);
    } else {
      for (const [f, text] of await read(undefined, [...files.keys()])) after.set(f, text);
      for (const [snapshot, paths] of bySnapshot(files, (e) => e.last.after ?? e.last.before))
        for (const f of await this.#deps.files.differing(root, snapshot, paths)) outside.add(f);
    }
    const out: Array<{ file: SessionDiffFile; unified: string }> = [];
    for (const [f, e] of files) {
      const d = textDiff(f, before.get(f), after.get(f));
      if (d) out.push({ file: { ...d.file, turns: e.turns, changedOutside: outside.has(f) }, unified: d.unified });
    }
    return out;
  }

  /** Forgets a deleted session's records (its snapshots stay in the shadow history, shared by the directory). */
  async forget(sessionId: string): Promise<void> {
    await this.#deps.records.deleteBySession(sessionId);
  }

  /**
   * Files of `range` that differ now from what the agent left: each compared with the snapshot
   * after the last turn of the range that wrote it.
   */
  async #conflicts(range: readonly Numbered[]): Promise<string[]> {
    const found: string[] = [];
    for (const [root, groups] of plan(range, (r) => r.after ?? r.before, 'latest'))
      for (const [snapshot, paths] of groups) found.push(...(await this.#deps.files.differing(root, snapshot, paths)));
    return [...new Set(found)].sort();
  }

  /** The record of a turn in its directory: made (with the snapshot before) by the first `before`. */
  #record(turn: TurnRef, make: boolean): Promise<TurnChangeRecord> {
    const key = `${turn.task}\0${turn.root}`;
    let open = this.#open.get(key);
    if (!open) {
      open = this.#load(turn, make);
      this.#open.set(key, open);
      open.catch(() => this.#open.delete(key));
      // The oldest entries go first (a Map iterates in insertion order).
      for (const k of this.#open.keys()) {
        if (this.#open.size <= OPEN_TURNS) break;
        this.#open.delete(k);
      }
    }
    return open;
  }

  async #load(turn: TurnRef, make: boolean): Promise<TurnChangeRecord> {
    const records = this.#deps.records;
    const found = await records.get(turn.task, turn.root);
    if (found) return found;
    if (!make) throw new Error(`no checkpoint before the writes of turn ${turn.task} in ${turn.root}`);
    const before = await this.#deps.files.snapshot(turn.root, keep(turn.task, 'before'));
    const record: TurnChangeRecord = {
      taskId: turn.task,
      sessionId: turn.session,
      root: turn.root,
      before,
      files: [],
      createdAt: this.#now().toISOString(),
    };
    await records.create(record);
    return record;
  }

  /** The session's turns, oldest first (turn n is the n-th), and whether each still runs. */
  async #turns(sessionId: string): Promise<{ id: string; live: boolean }[]> {
    const count = await this.#deps.tasks.countByContext(sessionId);
    const stored = count === 0 ? [] : await this.#deps.tasks.listByContext(sessionId, count);
    return stored.map((s) => ({ id: s.task.id, live: !isTerminal(s.task.status.state) }));
  }
}

/** Where a turn's snapshots are kept in the shadow history (task ids may hold `:` or `@`). */
function keep(task: string, which: 'before' | 'after'): string {
  const safe = task.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return `turns/${safe}-${createHash('sha256').update(task).digest('hex').slice(0, 8)}/${which}`;
}

/** The records of turns that still exist, with their numbers, oldest first. */
function numbered(records: readonly TurnChangeRecord[], turns: readonly { id: string }[]): Numbered[] {
  const index = new Map(turns.map((t, i) => [t.id, i + 1]));
  const out: Numbered[] = [];
  for (const record of records) {
    const turn = index.get(record.taskId);
    if (turn !== undefined) out.push({ turn, record });
  }
  return out.sort((a, b) => a.turn - b.turn);
}

/** The records of each directory, in turn order. */
function byRoot(range: readonly Numbered[]): Map<string, Numbered[]> {
  const out = new Map<string, Numbered[]>();
  for (const n of range) out.set(n.record.root, [...(out.get(n.record.root) ?? []), n]);
  return out;
}

/** Files grouped by the snapshot `pick` gives each: one read per snapshot. */
function bySnapshot<E>(files: ReadonlyMap<string, E>, pick: (e: E) => string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [f, e] of files) out.set(pick(e), [...(out.get(pick(e)) ?? []), f]);
  return out;
}

const diffPath = (f: SessionDiffFile): string => f.newPath ?? f.oldPath ?? '';

/** One entry per turn that changed files (a turn's directories together). */
function summarise(records: readonly Numbered[]): TurnChange[] {
  const byTurn = new Map<number, TurnChange>();
  for (const { turn, record } of records) {
    if (record.files.length === 0) continue;
    const entry = byTurn.get(turn) ?? { turn, taskId: record.taskId, files: [], undone: true };
    entry.files = [...new Set([...entry.files, ...record.files])].sort();
    entry.undone &&= record.undoneAt !== undefined;
    if (record.undoneAt !== undefined) entry.undoneAt = record.undoneAt;
    byTurn.set(turn, entry);
  }
  return [...byTurn.values()].map((e) =>
    e.undone ? e : { turn: e.turn, taskId: e.taskId, files: e.files, undone: false },
  );
}

/**
 * Per directory, per snapshot, the files to look at: each file of the range with the snapshot
 * `pick` gives for the earliest (restore: before it) or the latest (compare: after it) turn that wrote it.
 */
function plan(
  range: readonly Numbered[],
  pick: (r: TurnChangeRecord) => string,
  which: 'earliest' | 'latest',
): Map<string, Map<string, string[]>> {
  const chosen = new Map<string, Map<string, string>>();
  const ordered = which === 'earliest' ? range : [...range].reverse();
  for (const { record } of ordered) {
    const files = chosen.get(record.root) ?? new Map<string, string>();
    for (const f of record.files) if (!files.has(f)) files.set(f, pick(record));
    chosen.set(record.root, files);
  }
  const out = new Map<string, Map<string, string[]>>();
  for (const [root, files] of chosen) {
    const bySnapshot = new Map<string, string[]>();
    for (const [f, snapshot] of files) bySnapshot.set(snapshot, [...(bySnapshot.get(snapshot) ?? []), f]);
    out.set(root, bySnapshot);
  }
  return out;
}
