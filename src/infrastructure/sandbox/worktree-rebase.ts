/**
 * Rebasing a git-worktree sandbox onto the current head of its target branch, as one squashed
 * commit: the plan's changes (its base → its branch's tip) merged three-way onto the new head with
 * `git merge-recursive <base> -- <new head> <tip>`, which takes the merge base we name (not one git
 * would guess from history) and leaves no rebase or merge in progress. A conflict is committed with
 * its markers, so the sandbox stays an ordinary branch that checkpoints, diff and restore understand.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RebaseOutcome, SandboxInfo } from '../../application/index.ts';
import { stageAndCommit } from './git-stage.ts';
import { outOf, splitNul, type GitRunner } from './git.ts';
import { NO_PROGRAMS, changedPaths } from './sandbox-diff.ts';

/** A conflict marker git writes: seven `<` or `>` at the start of a line, then a space or the end. */
const MARKER = /^(?:<{7}|>{7})(?: |$)/m;

/**
 * Rebases with the sandbox's git `run`; the caller serialises this with applies to the same
 * repository, and `commitPending` commits the sandbox's pending work (called only when the target
 * branch moved). On an unexpected failure the sandbox is put back on the tip it had.
 */
export async function rebaseWorktreeSandbox(
  run: GitRunner,
  sandbox: SandboxInfo,
  root: string,
  commitPending: () => Promise<void>,
): Promise<RebaseOutcome> {
  const target = sandbox.targetBranch;
  if (!target || !sandbox.branch) throw new Error(`sandbox ${root} has no branch or target branch`);
  const o = { confine: true, workTree: root };
  const head = await outOf(run, root, ['rev-parse', '--verify', '-q', `refs/heads/${target}^{commit}`], o).catch(() => {
    throw new Error(`branch ${target} no longer exists in ${sandbox.source}: nothing to rebase onto`);
  });
  if (head === sandbox.baseCommit) return { ok: true, moved: false, sandbox, files: [] };
  await commitPending();
  const tip = await outOf(run, root, ['rev-parse', '--verify', 'HEAD^{commit}'], o);
  const moved: SandboxInfo = { ...sandbox, baseCommit: head };
  let conflicted: string[];
  try {
    await run.run(root, ['reset', '-q', '--hard', head], o);
    // GITHEAD_<sha> names each side in the conflict markers.
    const merge = await run.run(root, ['merge-recursive', sandbox.baseCommit, '--', head, tip], {
      ...o,
      okCodes: [1],
      env: { [`GITHEAD_${head}`]: target, [`GITHEAD_${tip}`]: `plan ${sandbox.branch}` },
    });
    conflicted =
      merge.code === 1
        ? [
            ...new Set(
              splitNul(await outOf(run, root, ['diff', ...NO_PROGRAMS, '--name-only', '--diff-filter=U', '-z'], o)),
            ),
          ]
        : [];
    if (merge.code === 1 && conflicted.length === 0)
      throw new Error(`git merge-recursive failed in ${root}: ${(merge.stderr || merge.stdout).trim()}`);
    const short = head.slice(0, 12);
    const message = conflicted.length
      ? `rebase onto ${target} ${short}: conflicts in ${conflicted.join(', ')}`
      : `rebase onto ${target} ${short}`;
    // Everything, conflicts with their markers included, committed as one checkpoint.
    await stageAndCommit(run, { root, force: false, nested: 'refuse', message });
  } catch (e) {
    await run.run(root, ['reset', '-q', '--hard', tip], o).catch(() => undefined);
    throw e;
  }
  if (conflicted.length > 0) {
    return {
      ok: false,
      reason: 'conflict',
      sandbox: moved,
      files: conflicted,
      message: `the plan's changes conflict with ${target} (now at ${head.slice(0, 12)}) in: ${conflicted.join(', ')}`,
    };
  }
  return { ok: true, moved: true, sandbox: moved, files: await changedPaths(run, root, head, 'HEAD') };
}

/** Of `files` (relative to `root`), those that hold a conflict marker; a file that is gone holds none. */
export async function unresolvedFiles(root: string, files: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const f of files) {
    const abs = path.resolve(root, f);
    if (path.relative(root, abs).startsWith('..') || path.isAbsolute(path.relative(root, abs))) continue;
    const text = await readFile(abs, 'utf8').catch(() => '');
    if (MARKER.test(text)) out.push(f);
  }
  return out;
}
