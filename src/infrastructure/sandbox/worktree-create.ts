/**
 * A git-worktree sandbox's creation in the user's repository: which branch and commit it starts
 * from, and `git worktree add` (hardened, not confined: it writes the user's repository's
 * worktree metadata, and checks out the user's own commit).
 */
import { rm } from 'node:fs/promises';
import type { SandboxInfo } from '../../application/index.ts';
import type { ResourceDefinition } from '../../domain/registry/resource.definition.ts';
import { configGuard } from './git-config-guard.ts';
import { git, gitOut } from './git.ts';

/**
 * The sandbox of `resource` at `dir` on branch `branch`: refused when the resource's path is not
 * the top of a work tree (a repository whose core.worktree points elsewhere included), or has no
 * branch to start from.
 */
export async function createWorktreeInfo(
  resource: Extract<ResourceDefinition, { type: 'git-checkout' }>,
  source: string,
  dir: string,
  branch: string,
): Promise<SandboxInfo> {
  // No --work-tree here: this asks where git itself takes the work tree to be.
  const top = await gitOut(source, ['rev-parse', '--show-toplevel']).catch(() => {
    throw new Error(`resource ${resource.name}: ${source} is not a git work tree`);
  });
  if (top !== source) {
    const configured = await gitOut(source, ['config', '--get', 'core.worktree']).catch(() => '');
    throw new Error(
      configured
        ? `resource ${resource.name}: the repository at ${source} sets core.worktree to ${configured}; CleverAgents works only in the directory a resource names`
        : `resource ${resource.name}: ${source} is inside the git work tree ${top}; register the top of the work tree`,
    );
  }
  const ro = { confine: true, workTree: source, env: { GIT_OPTIONAL_LOCKS: '0' } };
  const targetBranch =
    resource.branch ??
    (await git(source, ['symbolic-ref', '-q', '--short', 'HEAD'], { ...ro, okCodes: [1] })).stdout.trim();
  if (!targetBranch)
    throw new Error(`resource ${resource.name}: ${source} has a detached HEAD; set the resource's branch`);
  const baseCommit = await gitOut(
    source,
    ['rev-parse', '--verify', '-q', `refs/heads/${targetBranch}^{commit}`],
    ro,
  ).catch(() => {
    throw new Error(`resource ${resource.name}: branch ${targetBranch} has no commits in ${source}`);
  });
  return { resource: resource.name, kind: 'git-worktree', root: dir, source, branch, baseCommit, targetBranch };
}

/**
 * `git worktree add` of the sandbox (`fresh`: its branch must not exist yet). The caller holds the
 * repository's lock: one repository's worktree metadata has one writer at a time — a `worktree
 * prune` deletes the admin directory another `worktree add` has made and not yet filled in, and
 * that add fails ("could not open .git/worktrees/…/gitdir").
 */
export async function addWorktree(info: SandboxInfo, fresh: boolean): Promise<void> {
  const o = { confine: true, workTree: info.source };
  const branch = info.branch ?? '';
  await git(info.source, ['worktree', 'prune'], o);
  const has =
    (await git(info.source, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { ...o, okCodes: [1] })).code ===
    0;
  if (has && fresh)
    throw new Error(`branch ${branch} already exists in ${info.source}; delete it or remove the plan's sandbox`);
  await rm(info.root, { recursive: true, force: true });
  configGuard.forget(info.root);
  await git(
    info.source,
    ['worktree', 'add', '-q', ...(has ? [info.root, branch] : ['-b', branch, info.root, info.baseCommit])],
    o,
  );
}

/**
 * Removes the sandbox's worktree at `root` and its plan branch from the user's repository (the
 * caller holds the repository's lock; serialised with creates, see {@link addWorktree}).
 */
export async function removeWorktree(source: string, root: string, branch: string): Promise<void> {
  const o = { confine: true, workTree: source };
  await git(source, ['worktree', 'remove', '--force', '--force', root], o).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
  await git(source, ['worktree', 'prune'], o);
  const has = await git(source, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { ...o, okCodes: [1] });
  if (has.code === 0) await git(source, ['branch', '-D', branch], o);
}
