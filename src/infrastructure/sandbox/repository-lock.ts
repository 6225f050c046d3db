/**
 * One CleverAgents process at a time changes a repository's worktree metadata. Every local CLI
 * command runs its own agent, so two `agents plan execute` on one repository are two processes:
 * the in-process `KeyedLock` does not see the other, and git does not serialise
 * `worktree add` against the rest (a `worktree add -b` reads every worktree's HEAD, and dies on
 * the `commondir` another `worktree add` has created and not yet written).
 *
 * The lock is a file in the repository's common git directory, made atomically with its owner
 * (`pid host`) in it. A file whose owner is a process of this host that no longer runs is
 * stale and taken over; one from another host is after {@link STALE_MS}.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import { processExists } from '../system/process-exists.ts';
import { gitOut, worktreeFiles } from './git.ts';

const LOCK_NAME = 'cleveragents-worktrees.lock';
const WAIT_MS = 180_000;
const STALE_MS = 15 * 60_000;

export interface RepositoryLockOptions {
  /** How long to wait for another process's lock (default 3 minutes: a checkout can take that). */
  waitMs?: number;
}

/** Runs `work` holding the repository's lock (see the module's comment). */
export async function withRepositoryLock<T>(
  repo: string,
  work: () => Promise<T>,
  opts: RepositoryLockOptions = {},
): Promise<T> {
  const common = await commonDir(repo);
  const file = path.join(common, LOCK_NAME);
  const me = `${process.pid} ${hostname()}\n`;
  const deadline = Date.now() + (opts.waitMs ?? WAIT_MS);
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    if (tryCreate(file, me)) {
      try {
        return await work();
      } finally {
        rmSync(file, { force: true });
      }
    }
    const owner = holder(file);
    if (owner?.stale) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new AppError(
        'UNAVAILABLE',
        `the repository ${repo} is busy: another CleverAgents process (${owner?.text ?? 'unknown'}) holds ${file}`,
        { hint: `wait for it to finish; if no such process runs any more, delete ${file}` },
      );
    await new Promise((r) => setTimeout(r, pause));
  }
}

/**
 * Creates the lock holding its owner, or nothing when it exists: the owner is written to a file of
 * our own, then hard-linked as the lock, so that a lock never exists empty (a crash between making
 * the lock and writing into it would leave one no one could tell was stale).
 */
function tryCreate(file: string, owner: string): boolean {
  const mine = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(mine, owner);
  try {
    linkSync(mine, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    rmSync(mine, { force: true });
  }
}

/** Who holds the lock, and whether that owner is gone. Undefined when the file went away meanwhile. */
function holder(file: string): { text: string; stale: boolean } | undefined {
  let text: string;
  let age: number;
  try {
    text = readFileSync(file, 'utf8').trim();
    age = Date.now() - statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const m = /^(\d+) (\S+)$/.exec(text);
  // Written right after it is created: an empty file is an owner still writing, unless it is old.
  if (!m) return { text: text || 'starting', stale: age > STALE_MS };
  const [pid, host] = [Number(m[1]), m[2]];
  const shown = `pid ${pid} on ${host}`;
  if (host !== hostname()) return { text: shown, stale: age > STALE_MS };
  return { text: shown, stale: pid !== process.pid && !processExists(pid) };
}

/** The repository's common git directory (where its worktrees' metadata lives), from its files or from git. */
async function commonDir(repo: string): Promise<string> {
  const files = worktreeFiles(repo);
  if (files) return files.common;
  const out = await gitOut(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
    env: { GIT_OPTIONAL_LOCKS: '0' },
  });
  return path.resolve(repo, out);
}
