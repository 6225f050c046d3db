import { realpath, stat } from 'node:fs/promises';
import { gitBinds, isUnderAny, type SystemView } from './confinement-view.ts';
import type { CommandInvocation } from './confinement.types.ts';

/** HOME inside the sandbox: an empty directory in its private /tmp. */
export const SANDBOX_HOME = '/tmp/home';

/**
 * bwrap's options for one command (`env`: its environment; `secretsWanted`: what to mask where it exists); later mounts go on top of earlier
 * ones: the private /tmp, the system view (a toolchain under /tmp shows on top of it), the
 * secrets under what it shows masked, the sandbox, its git metadata read-only (or the extra
 * writable dirs), the secrets inside those masked, and last the root itself made read-only
 * (nothing can be created beside the mounts).
 */
export async function bwrapArgs(
  view: SystemView,
  secretsWanted: readonly string[],
  inv: CommandInvocation,
  env: Record<string, string>,
): Promise<string[]> {
  const a = ['--tmpfs', '/tmp', '--dir', SANDBOX_HOME, ...view.args, '--proc', '/proc', '--dev', '/dev'];
  const secrets = await secretPaths(secretsWanted);
  // Masked before the sandbox is bound: a secret may hold it (the data directory holds every sandbox).
  a.push(...(await masks(secrets.filter((p) => isUnderAny(p, view.roots)))));
  const root = inv.sandboxRoot;
  a.push('--bind', root, root);
  const rw = [root];
  if (inv.writable && inv.writable.length > 0) {
    for (const p of inv.writable) a.push('--bind', p, p);
    rw.push(...inv.writable);
  } else {
    // The sandbox's git metadata stays read-only: a command that rewrote `.git` (or, in a worktree,
    // its HEAD) could make the server's next checkpoint commit into the user's own branches.
    a.push(...(await gitBinds(root)));
  }
  // A chat's work directory is the user's own directory: a home registered as a resource keeps its secrets.
  const rwReal = await Promise.all(rw.map((p) => realpath(p).catch(() => p)));
  a.push(...(await masks(secrets.filter((p) => rwReal.some((d) => p !== d && isUnderAny(p, [d]))))));
  a.push('--remount-ro', '/');
  a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts');
  if (inv.network !== 'allow') a.push('--unshare-net');
  a.push('--die-with-parent', '--new-session', '--chdir', inv.cwd, '--clearenv');
  for (const [k, v] of Object.entries(env)) a.push('--setenv', k, v);
  return a;
}

/**
 * The existing secrets (real paths). Only those under something the command sees get a mask:
 * the rest is not in the view at all, and a mask there would only create the path.
 */
async function secretPaths(wanted: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const p of wanted) {
    const real = await realpath(p).catch(() => undefined);
    if (real && real !== '/') out.add(real);
  }
  return [...out].sort();
}

/** An empty read-only directory, or an empty file, over each path. */
async function masks(paths: readonly string[]): Promise<string[]> {
  const a: string[] = [];
  for (const p of paths) {
    const st = await stat(p).catch(() => undefined);
    if (st?.isDirectory()) a.push('--tmpfs', p, '--remount-ro', p);
    else if (st) a.push('--ro-bind', '/dev/null', p);
  }
  return a;
}
