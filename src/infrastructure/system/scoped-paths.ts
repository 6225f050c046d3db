/**
 * Where a resource's directory is (issue #35). On a server, a namespace without the host-path
 * capability names directories inside its workspace (`<workspace root>/<namespace>`): relative
 * paths are relative to it, and every path is resolved component by component (realpath), so a
 * symlink cannot lead out of it. Nothing is ever inside a `.git` directory. The answer for a path
 * that is not allowed and one that does not exist is the same, so a refusal tells nothing about
 * the host.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { PathScope, ResolvedPath } from '../../application/index.ts';

/** True when `child` is `parent` or inside it. */
export function within(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const insideGitDir = (p: string): boolean => p.split(path.sep).includes('.git');

async function realDir(p: string): Promise<string | undefined> {
  const real = await realpath(p).catch(() => undefined);
  if (real === undefined) return undefined;
  return (await stat(real).catch(() => undefined))?.isDirectory() ? real : undefined;
}

/**
 * The directory `given` names within `scope`, or undefined when it is not an existing directory
 * there (whatever the reason: missing, outside, through a symlink that leaves, inside `.git`).
 */
export async function resolveInScope(given: string, scope: PathScope): Promise<ResolvedPath | undefined> {
  if (given.includes('\0')) return undefined;
  const workspace = scope.workspace && (await realDir(scope.workspace));
  if (!path.isAbsolute(given)) {
    if (!workspace) return undefined;
    const real = await realDir(path.resolve(workspace, given));
    if (!real || !within(workspace, real) || insideGitDir(path.relative(workspace, real))) return undefined;
    return { real, stored: path.relative(workspace, real) || '.' };
  }
  const real = await realDir(given);
  if (!real || insideGitDir(real)) return undefined;
  if (workspace && within(workspace, real)) return { real, stored: path.relative(workspace, real) || '.' };
  if (scope.granted === 'any') return { real, stored: given };
  for (const dir of scope.granted ?? []) {
    const grantedReal = await realDir(dir);
    if (grantedReal && within(grantedReal, real)) return { real, stored: given };
  }
  return undefined;
}
