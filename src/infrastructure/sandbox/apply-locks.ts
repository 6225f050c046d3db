/**
 * The git locks an apply into the user's work tree takes, and those a crash left behind
 * (see worktree-apply.ts). Only a lock that is known to be ours is ever removed.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import type { WorktreeJournal } from './apply-journal.ts';
import { lstatOrUndefined } from './sandbox-files.ts';

const LOCK_WAIT_MS = 10_000;
/** git writes a ref lock's content right after making it: one still empty this long was left by a killed git. */
const EMPTY_REF_LOCK_MS = 2_000;

/** The mark an index lock of ours holds. */
const markOf = (j: WorktreeJournal): string => `cleveragents apply ${j.id}\n`;

/**
 * Takes git's index lock for the apply (waiting a while for another git command to finish): a
 * file made with our mark and hard-linked as `index.lock`, so the lock exists with its content or
 * not at all. A lock holding our mark is one a crash left: ours to take. Returns its release.
 */
export async function lockIndex(j: WorktreeJournal): Promise<() => void> {
  const lock = path.join(j.gitDir, 'index.lock');
  const mine = path.join(j.gitDir, `cleveragents-index-lock.${j.id}`);
  writeFileSync(mine, markOf(j));
  try {
    for (const deadline = Date.now() + LOCK_WAIT_MS; ;) {
      try {
        linkSync(mine, lock);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      if (isOurLock(j)) break;
      if (Date.now() > deadline) throw lockedBy(j.repository, lock, `the index of ${j.repository}`);
      await sleep(50);
    }
  } finally {
    rmSync(mine, { force: true });
  }
  return () => releaseOurLock(j);
}

function isOurLock(j: WorktreeJournal): boolean {
  return readOrUndefined(path.join(j.gitDir, 'index.lock')) === markOf(j);
}

/** Removes the index lock if it is ours (a crash may have left it). */
export function releaseOurLock(j: WorktreeJournal): void {
  if (isOurLock(j)) rmSync(path.join(j.gitDir, 'index.lock'), { force: true });
  rmSync(path.join(j.gitDir, 'cleveragents-apply.index'), { force: true });
  rmSync(path.join(j.gitDir, 'cleveragents-apply.index.lock'), { force: true });
}

/** Where git locks the journal's branch (the files backend: `<ref>.lock` in the common git directory). */
export function branchLockOf(j: WorktreeJournal): string {
  const common = readOrUndefined(path.join(j.gitDir, 'commondir'))?.trim();
  return path.join(common === undefined ? j.gitDir : path.resolve(j.gitDir, common), `${j.branch}.lock`);
}

/**
 * Removes the branch's lock when the apply's killed `update-ref` left it: it holds the apply's new
 * commit (no one else writes that commit), or it stayed empty (a git killed between making and
 * writing it; a running one fills it at once). Anything else is another git command's, and stays.
 */
export async function releaseOurBranchLock(j: WorktreeJournal): Promise<void> {
  const lock = branchLockOf(j);
  for (const deadline = Date.now() + EMPTY_REF_LOCK_MS; ;) {
    const content = readOrUndefined(lock);
    if (content === undefined) return;
    if (content.trim() === j.newCommit) break;
    if (content !== '') return;
    const age = Date.now() - (lstatOrUndefined(lock)?.mtimeMs ?? Date.now());
    if (age >= EMPTY_REF_LOCK_MS || Date.now() > deadline) break;
    await sleep(50);
  }
  rmSync(lock, { force: true });
}

/** The error for a lock another git command holds, with what to do. */
export function lockedBy(repository: string, lock: string, what: string): AppError {
  return new AppError('UNAVAILABLE', `${what} is locked by another git command (${lock})`, {
    hint: `wait for it to finish; if no git command runs in ${repository} any more, delete ${lock} and run the command again`,
  });
}

function readOrUndefined(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
