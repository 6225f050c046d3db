/**
 * Applying a git-remote's sandbox: the plan's changes become one commit on the plan's base (the
 * remote's tip when the plan started, or when it was last rebased), pushed to the remote. Nothing
 * of the user's is touched here: the clone is the server's, and the remote decides what it takes.
 */
import type { ApplyOutcome, SandboxInfo } from '../../application/index.ts';
import type { GitRemoteResource, ResourceDefinition } from '../../domain/registry/resource.definition.ts';
import type { GitRemotes } from './git-remote.ts';
import { gitOut } from './git.ts';
import { changedPaths } from './sandbox-diff.ts';
import { directGit } from './git.ts';

/** The git-remote definition of a remote sandbox's resource (the application passes it as it is now). */
export function remoteOf(sandbox: SandboxInfo, resource: ResourceDefinition | undefined): GitRemoteResource {
  if (resource?.type !== 'git-remote' || resource.name !== sandbox.resource)
    throw new Error(`resource ${sandbox.resource} is no longer a git-remote: its plan cannot reach the remote`);
  return resource;
}

/**
 * `push: branch` (the default): the commit goes to the plan's own branch on the remote, replacing
 * what an earlier apply of the plan put there. `push: target`: the remote's target branch is
 * fetched first; when it moved since the plan's base nothing is pushed (the plan must be rebased),
 * else the commit is pushed as a fast-forward, which the remote refuses in turn if the branch moved
 * meanwhile. The caller holds the clone's lock and has checkpointed the sandbox.
 */
export async function pushRemoteSandbox(
  remotes: GitRemotes,
  r: GitRemoteResource,
  sandbox: SandboxInfo,
  message: string,
): Promise<ApplyOutcome> {
  const { source, baseCommit, branch, targetBranch } = sandbox;
  if (!branch || !targetBranch) throw new Error(`sandbox ${sandbox.root} has no branch or target branch`);
  const o = { confine: true };
  const planTip = await gitOut(source, ['rev-parse', '--verify', `refs/heads/${branch}^{commit}`], o);
  const files = await changedPaths(directGit, source, baseCommit, planTip);
  if (files.length === 0) return { ok: true, files: [] };
  const mode = r.push ?? 'branch';
  if (mode === 'target') {
    const { tip } = await remotes.sync(r);
    if (tip !== baseCommit) return moved(r, targetBranch, baseCommit, tip, files);
  }
  const tree = await gitOut(source, ['rev-parse', `${planTip}^{tree}`], o);
  const commit = await gitOut(source, ['commit-tree', '--no-gpg-sign', tree, '-p', baseCommit, '-m', message], {
    ...o,
    identity: true,
  });
  const pushed =
    mode === 'target'
      ? await remotes.push(r, source, commit, targetBranch, false)
      : await remotes.push(r, source, commit, branch, true);
  if (!pushed.ok) return { ok: false, reason: 'conflict', files, message: pushed.message };
  return { ok: true, commit, files: [...files].sort(), pushedTo: mode === 'target' ? targetBranch : branch };
}

function moved(r: GitRemoteResource, target: string, base: string, tip: string, files: string[]): ApplyOutcome {
  return {
    ok: false,
    reason: 'conflict',
    files,
    message: `${target} of ${r.name} moved on the remote since the plan's base (${base.slice(0, 12)} → ${tip.slice(0, 12)}): pushing would not be a fast-forward; nothing was pushed`,
  };
}
