import { stat } from 'node:fs/promises';
import type { PathFacts, PathScope, ResolvedPath, ResourceInspector } from '../../application/index.ts';
import { gitOut } from '../sandbox/git.ts';
import { resolveInScope } from './scoped-paths.ts';

/** Looks at a resource's path on this machine: does it exist, is it a git work tree, on which branch. */
export class FsResourceInspector implements ResourceInspector {
  async inspect(path: string, branch?: string): Promise<PathFacts> {
    const s = await stat(path).catch(() => undefined);
    if (!s) return { exists: false, isDirectory: false, gitWorkTree: false };
    if (!s.isDirectory()) return { exists: true, isDirectory: false, gitWorkTree: false };
    const inside = await git(path, ['rev-parse', '--is-inside-work-tree']);
    if (inside !== 'true') return { exists: true, isDirectory: true, gitWorkTree: false };
    const facts: PathFacts = {
      exists: true,
      isDirectory: true,
      gitWorkTree: true,
      currentBranch: (await git(path, ['symbolic-ref', '--short', '-q', 'HEAD'])) || undefined,
    };
    if (branch !== undefined)
      facts.branchExists = (await git(path, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`])) !== undefined;
    return facts;
  }

  resolve(given: string, scope: PathScope): Promise<ResolvedPath | undefined> {
    return resolveInScope(given, scope);
  }
}

/**
 * A read-only question to git about a path a user registers (which may be anyone's repository):
 * through the one runner, so nothing the repository configured runs. Undefined when git says no.
 */
async function git(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    return (await gitOut(cwd, args, { timeoutMs: 10_000, env: { GIT_OPTIONAL_LOCKS: '0' } })).trim();
  } catch {
    return undefined;
  }
}
