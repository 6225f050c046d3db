/**
 * Applying a git-worktree sandbox: a squash merge of the plan's branch into the user's checked-out
 * target branch that either happens entirely or not at all, under `kill -9` at any instant.
 *
 * 1. Every check before anything is written: the branch checked out, no unresolved merge, the
 *    plan's paths clean in the user's work tree (nothing in their way), `merge-tree` without conflict.
 * 2. The commit is built without touching the user's index or work tree (`commit-tree`).
 * 3. A journal (repository, branch, old tip, new commit, paths) is written and fsynced.
 * 4. The commit point: `update-ref <branch> <new> <old>`.
 * 5. The index and work tree follow for the plan's paths only (see {@link finishWorktreeApply}).
 * 6. The journal is removed.
 *
 * After a crash, {@link recoverWorktreeApply} reads the journal: the branch still at the old tip —
 * nothing happened; at the new commit — step 5 again (it is idempotent); anything else — someone
 * moved the branch: the work tree is left as it is.
 */
import { copyFileSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { ApplyOutcome, SandboxInfo } from '../../application/index.ts';
import { branchLockOf, lockIndex, lockedBy, releaseOurBranchLock, releaseOurLock } from './apply-locks.ts';
import { journalId, syncDir, type ApplyJournals, type WorktreeJournal } from './apply-journal.ts';
import { COMMIT_IDENTITY, GitError, directGit, git, gitOut, splitNul, worktreeFiles, type GitOptions } from './git.ts';
import { NO_PROGRAMS, changedPaths } from './sandbox-diff.ts';
import { lstatOrUndefined, pruneEmptyParents } from './sandbox-files.ts';

const STATUS_CHUNK = 1000;

/** Applies; the caller has committed the sandbox's pending work and holds the repository's lock. */
export async function applyWorktreeSandbox(
  sandbox: SandboxInfo,
  message: string,
  journals: ApplyJournals,
): Promise<ApplyOutcome> {
  const src = sandbox.source;
  const target = sandbox.targetBranch;
  const planBranch = sandbox.branch;
  if (!target || !planBranch) throw new Error(`sandbox ${sandbox.root} has no branch or target branch`);
  // Never take optional locks: a refused apply must not even refresh the user's index.
  const ro: GitOptions = { confine: true, workTree: src, env: { GIT_OPTIONAL_LOCKS: '0' } };
  const tips = await checkTarget(sandbox, target, planBranch, ro);
  if ('ok' in tips) return tips;
  const merged = await mergeTree(src, target, tips, ro);
  if ('ok' in merged) return merged;
  const { targetTip } = tips;
  if (merged.tree === (await gitOut(src, ['rev-parse', `${targetTip}^{tree}`], ro)))
    return alreadyApplied(src, targetTip, message);

  const tied: GitOptions = { confine: true, workTree: src, diesWithAgent: true };
  const author = await repositoryIdentity(src, ro);
  const commit = await gitOut(src, ['commit-tree', '--no-gpg-sign', merged.tree, '-p', targetTip, '-m', message], {
    ...tied,
    identity: true,
    ...(author ? { env: { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email } } : {}),
  });
  const { written, deleted } = await changesOf(src, targetTip, commit);
  const blocked = inTheWay(src, written, deleted);
  if (blocked.length > 0)
    return dirty(
      blocked,
      `something in ${src} is in the way of files the plan writes: ${blocked.join(', ')}; move it away first`,
    );
  const files = worktreeFiles(src);
  if (!files) throw new Error(`${src} is not a work tree whose git files can be read`);
  const journal: WorktreeJournal = {
    version: 1,
    kind: 'worktree',
    id: journalId(),
    repository: src,
    gitDir: files.gitDir,
    branch: `refs/heads/${target}`,
    oldTip: targetTip,
    newCommit: commit,
    written,
    deleted,
    createdAt: new Date().toISOString(),
  };
  return commitJournaled(journal, journals, journals.fileOf(sandbox.root), target);
}

/**
 * The repository's own git identity, as git resolves it for a commit there (`author.*` before
 * `user.*`, every config scope with its includes): the apply's commit is the user's work, so it
 * is theirs as author, and the agent's as committer. `git config --get` reads files and runs
 * nothing. Undefined when the repository has no full identity (the agent is then the author too,
 * rather than an identity git would guess from the host name).
 */
export async function repositoryIdentity(
  src: string,
  ro: GitOptions,
): Promise<{ name: string; email: string } | undefined> {
  const get = async (key: string): Promise<string> =>
    (await git(src, ['config', '--get', key], { ...ro, okCodes: [1] })).stdout.trim();
  const name = (await get('author.name')) || (await get('user.name'));
  const email = (await get('author.email')) || (await get('user.email'));
  return name && email ? { name, email } : undefined;
}

interface Tips {
  targetTip: string;
  planTip: string;
}

/**
 * Step 1 up to the merge: the target checked out, the plan's changes not empty, no unresolved
 * merge, and the plan's paths clean in the user's work tree. Answers the tips, or why not to apply.
 */
async function checkTarget(
  sandbox: SandboxInfo,
  target: string,
  planBranch: string,
  ro: GitOptions,
): Promise<Tips | ApplyOutcome> {
  const src = sandbox.source;
  const current = (await git(src, ['symbolic-ref', '-q', '--short', 'HEAD'], { ...ro, okCodes: [1] })).stdout.trim();
  if (current !== target) {
    return dirty(
      [],
      current
        ? `${src} is on branch ${current}; check out ${target} to apply`
        : `${src} has a detached HEAD; check out ${target} to apply`,
    );
  }
  const targetTip = await gitOut(src, ['rev-parse', '--verify', `refs/heads/${target}^{commit}`], ro);
  const planTip = await gitOut(src, ['rev-parse', '--verify', `refs/heads/${planBranch}^{commit}`], ro);
  const planFiles = await changedPaths(directGit, src, sandbox.baseCommit, planTip);
  if (planFiles.length === 0) return { ok: true, files: [] };

  const unmerged = splitNul(await gitOut(src, ['ls-files', '-u', '-z'], ro));
  if (unmerged.length > 0) return dirty([], `${src} has unresolved merge conflicts; resolve them before applying`);

  const dirtyFiles = await dirtyPaths(src, planFiles);
  if (dirtyFiles.length > 0) {
    return dirty(
      dirtyFiles,
      `files the plan changed have local changes in ${src}: ${dirtyFiles.join(', ')}; commit or stash them first`,
    );
  }
  return { targetTip, planTip };
}

/** The squash's tree from `merge-tree` (nothing written to the work tree), or the files in conflict. */
async function mergeTree(
  src: string,
  target: string,
  { targetTip, planTip }: Tips,
  ro: GitOptions,
): Promise<{ tree: string } | ApplyOutcome> {
  const merge = await git(src, ['merge-tree', '--write-tree', '-z', '--name-only', targetTip, planTip], {
    ...ro,
    okCodes: [1],
  });
  const fields = merge.stdout.split('\0');
  if (merge.code === 1) {
    const end = fields.indexOf('', 1);
    const files = [...new Set(fields.slice(1, end === -1 ? undefined : end))];
    return {
      ok: false,
      reason: 'conflict',
      files,
      message: `the plan's changes conflict with ${target} in: ${files.join(', ')}`,
    };
  }
  return { tree: fields[0] ?? '' };
}

/** Steps 3 to 6: the journal, the commit point, the work tree following, the journal removed. */
async function commitJournaled(
  journal: WorktreeJournal,
  journals: ApplyJournals,
  file: string,
  target: string,
): Promise<ApplyOutcome> {
  const src = journal.repository;
  const tied: GitOptions = { confine: true, workTree: src, diesWithAgent: true };
  journals.write(file, journal);
  try {
    await git(
      src,
      ['update-ref', '-m', 'cleveragents: apply plan (squash)', journal.branch, journal.newCommit, journal.oldTip],
      tied,
    );
  } catch (e) {
    // Another git command holds the branch, or moved it meanwhile: nothing was written.
    journals.remove(file);
    if (e instanceof GitError && /cannot lock ref[^]*File exists/.test(e.stderr))
      throw lockedBy(src, branchLockOf(journal), `${target} in ${src}`);
    if (e instanceof GitError) return dirty([], `${target} moved while applying; try again (${e.stderr.trim()})`);
    throw e;
  }
  await finishWorktreeApply(journal);
  journals.remove(file);
  return { ok: true, commit: journal.newCommit, files: [...journal.written, ...journal.deleted].sort() };
}

/**
 * The branch already holds this apply's commit (an apply that a crash interrupted and the recovery
 * completed, applied again): success, with that commit. Otherwise the plan's changes are simply
 * there already, and nothing is committed.
 */
async function alreadyApplied(src: string, tip: string, message: string): Promise<ApplyOutcome> {
  const raw = await gitOut(src, ['cat-file', 'commit', tip], { confine: true });
  const head = raw.slice(0, raw.indexOf('\n\n'));
  const body = raw.slice(raw.indexOf('\n\n') + 2);
  // The agent commits every apply; the author is the user's identity (repositoryIdentity).
  const ours = head.includes(`\ncommitter ${COMMIT_IDENTITY.name} <${COMMIT_IDENTITY.email}> `);
  const parent = /^parent ([0-9a-f]+)$/m.exec(head)?.[1];
  if (!ours || !parent || body.trim() !== message.trim()) return { ok: true, files: [] };
  return { ok: true, commit: tip, files: await changedPaths(directGit, src, parent, tip) };
}

/** What a commit writes (adds, modifies, changes the type of) and deletes, from its parent. */
async function changesOf(src: string, from: string, to: string): Promise<{ written: string[]; deleted: string[] }> {
  const out = splitNul(
    await gitOut(src, ['diff', ...NO_PROGRAMS, '--no-renames', '--name-status', '-z', from, to], { confine: true }),
  );
  const written: string[] = [];
  const deleted: string[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) (out[i] === 'D' ? deleted : written).push(out[i + 1] ?? '');
  return { written, deleted };
}

/**
 * Of the paths the apply writes, those it could not write without destroying something git does
 * not track (the status check sees files, not these): the path is a directory that holds none of
 * the files the apply deletes (an empty one), or a parent is a file or a symlink that the apply
 * does not delete.
 */
function inTheWay(src: string, written: readonly string[], deleted: readonly string[]): string[] {
  const gone = new Set(deleted);
  const out: string[] = [];
  for (const p of written) {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      const st = lstatOrUndefined(path.join(src, rel));
      if (!st) break;
      const blocked =
        i === parts.length
          ? st.isDirectory() && !deleted.some((d) => d.startsWith(`${rel}/`))
          : !st.isDirectory() && !gone.has(rel);
      if (blocked) {
        out.push(p);
        break;
      }
    }
  }
  return out;
}

/**
 * Brings the user's index and work tree to the journal's new commit for its paths, whatever part
 * of this was done before (a crash may have left any of it): in a private copy of the index, under
 * git's own index lock (taken with our mark in it, so a lock a crash left behind is known to be
 * ours), deleted paths removed from the work tree and the index, written ones checked out; the
 * private index then replaces the real one.
 */
export async function finishWorktreeApply(j: WorktreeJournal): Promise<void> {
  const release = await lockIndex(j);
  const index = path.join(j.gitDir, 'index');
  const priv = path.join(j.gitDir, 'cleveragents-apply.index');
  rmSync(priv, { force: true });
  rmSync(`${priv}.lock`, { force: true });
  try {
    copyFileSync(index, priv);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const o: GitOptions = { confine: true, workTree: j.repository, diesWithAgent: true, env: { GIT_INDEX_FILE: priv } };
  for (const p of j.deleted) removeFile(j.repository, p);
  if (j.deleted.length > 0)
    await git(j.repository, ['update-index', '--force-remove', '-z', '--stdin'], { ...o, input: nul(j.deleted) });
  if (j.written.length > 0)
    await git(
      j.repository,
      ['--literal-pathspecs', 'checkout', '-q', j.newCommit, '--pathspec-from-file=-', '--pathspec-file-nul'],
      { ...o, input: nul(j.written) },
    );
  renameSync(priv, index);
  syncDir(j.gitDir);
  release();
}

const nul = (paths: readonly string[]): string => paths.map((p) => `${p}\0`).join('');

/** Deletes a file (or symlink) the apply deletes, and the directories that leaves empty; a directory there now is left. */
function removeFile(root: string, rel: string): void {
  const abs = path.join(root, rel);
  const st = lstatOrUndefined(abs);
  if (!st || st.isDirectory()) return;
  unlinkSync(abs);
  pruneEmptyParents(root, rel);
}

/** What the recovery of one journal did. */
export type RecoveryOutcome = 'rolled-back' | 'completed' | 'left';

/** Recovers an interrupted apply from its journal (see the module's comment); the caller holds the repository's lock. */
export async function recoverWorktreeApply(j: WorktreeJournal): Promise<{ outcome: RecoveryOutcome; detail: string }> {
  const o: GitOptions = { confine: true, workTree: j.repository, env: { GIT_OPTIONAL_LOCKS: '0' } };
  // The apply's update-ref, killed with the agent, may have left the branch locked.
  await releaseOurBranchLock(j);
  const tip = (
    await git(j.repository, ['rev-parse', '--verify', '-q', `${j.branch}^{commit}`], { ...o, okCodes: [1] })
  ).stdout.trim();
  if (tip === j.oldTip) {
    releaseOurLock(j);
    return { outcome: 'rolled-back', detail: `${j.branch} is still at ${j.oldTip.slice(0, 12)}: nothing was applied` };
  }
  if (tip === j.newCommit) {
    const head = (await git(j.repository, ['symbolic-ref', '-q', 'HEAD'], { ...o, okCodes: [1] })).stdout.trim();
    if (head === j.branch) {
      await finishWorktreeApply(j);
      return {
        outcome: 'completed',
        detail: `${j.branch} is at ${j.newCommit.slice(0, 12)}: the work tree was brought to it`,
      };
    }
    releaseOurLock(j);
    return {
      outcome: 'left',
      detail: `${j.branch} is at the applied commit ${j.newCommit.slice(0, 12)} but ${head || 'a detached HEAD'} is checked out: the work tree was left as it is`,
    };
  }
  releaseOurLock(j);
  return {
    outcome: 'left',
    detail: `${j.branch} moved to ${tip ? tip.slice(0, 12) : 'nowhere'} since the interrupted apply (neither ${j.oldTip.slice(0, 12)} nor ${j.newCommit.slice(0, 12)}): the work tree was left as it is`,
  };
}

function dirty(files: string[], message: string): ApplyOutcome {
  return { ok: false, reason: 'dirty', files, message };
}

/** The given paths that are modified, staged, untracked or ignored-but-present in the user's work tree. */
async function dirtyPaths(repo: string, paths: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (let i = 0; i < paths.length; i += STATUS_CHUNK) {
    const chunk = paths.slice(i, i + STATUS_CHUNK);
    const out = await gitOut(
      repo,
      [
        '--literal-pathspecs',
        'status',
        '--porcelain=v1',
        '-z',
        '--no-renames',
        '--untracked-files=all',
        '--ignored=matching',
        '--ignore-submodules=all',
        '--',
        ...chunk,
      ],
      { confine: true, workTree: repo, env: { GIT_OPTIONAL_LOCKS: '0' } },
    );
    for (const entry of splitNul(out)) found.add(entry.slice(3));
  }
  return [...found].sort();
}
