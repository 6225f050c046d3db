/**
 * Applying a git-worktree sandbox: a squash merge of the plan's branch into the user's checked-out
 * target branch, done with plumbing so that every check happens before anything is written and the
 * user's unrelated staged or unstaged changes are neither committed nor disturbed:
 * merge-tree (conflicts?) → commit-tree (one commit, one parent) → read-tree -m -u (two-tree
 * switch of the work tree and index, itself refusing to overwrite local changes) → update-ref
 * (compare-and-swap on the branch).
 */
import type { ApplyOutcome, SandboxInfo } from '../../application/index.js';
import { GitError, git, gitOut, splitNul } from './git.js';
import { changedPaths } from './sandbox-diff.js';

const STATUS_CHUNK = 200;

/** Applies; the caller has committed the sandbox's pending work and serialises applies per repository. */
export async function applyWorktreeSandbox(sandbox: SandboxInfo, message: string): Promise<ApplyOutcome> {
  const src = sandbox.source;
  const target = sandbox.targetBranch;
  const planBranch = sandbox.branch;
  if (!target || !planBranch) throw new Error(`sandbox ${sandbox.root} has no branch or target branch`);
  const o = { confine: true };
  // Never take optional locks: a refused apply must not even refresh the user's index.
  const ro = { confine: true, env: { GIT_OPTIONAL_LOCKS: '0' } };

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
  const planFiles = await changedPaths(src, sandbox.baseCommit, planTip);
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

  const merge = await git(src, ['merge-tree', '--write-tree', '-z', '--name-only', targetTip, planTip], {
    ...ro,
    okCodes: [1],
  });
  const fields = merge.stdout.split('\0');
  const tree = fields[0] ?? '';
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
  if (tree === (await gitOut(src, ['rev-parse', `${targetTip}^{tree}`], ro))) return { ok: true, files: [] };

  const commit = await gitOut(src, ['commit-tree', '--no-gpg-sign', tree, '-p', targetTip, '-m', message], {
    ...o,
    identity: true,
  });
  const files = await changedPaths(src, targetTip, commit);
  // From here on we write. A stale stat cache would make read-tree think clean files are dirty.
  await git(src, ['update-index', '-q', '--refresh'], { ...o, okCodes: [1] });
  try {
    await git(src, ['read-tree', '-m', '-u', targetTip, commit], o);
  } catch (e) {
    // read-tree checks everything before it writes; a refusal left the work tree as it was.
    if (e instanceof GitError) return dirty(files, `cannot update the work tree of ${src}: ${e.stderr.trim()}`);
    throw e;
  }
  try {
    await git(
      src,
      ['update-ref', '-m', 'cleveragents: apply plan (squash)', `refs/heads/${target}`, commit, targetTip],
      o,
    );
  } catch (e) {
    // Someone moved the branch meanwhile: put the work tree and index back and report.
    await git(src, ['read-tree', '-m', '-u', commit, targetTip], o);
    if (e instanceof GitError) return dirty([], `${target} moved while applying; try again (${e.stderr.trim()})`);
    throw e;
  }
  return { ok: true, commit, files };
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
        '--',
        ...chunk,
      ],
      { confine: true, env: { GIT_OPTIONAL_LOCKS: '0' } },
    );
    for (const entry of splitNul(out)) found.add(entry.slice(3));
  }
  return [...found].sort();
}
