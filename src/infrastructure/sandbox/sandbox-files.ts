/** The files a sandbox keeps beside it, and small path helpers of the sandbox manager. */
import { lstatSync, rmdirSync, type Stats } from 'node:fs';
import { lstat, readFile, realpath, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import type { SandboxInfo } from '../../application/index.ts';
import type { ResourceDefinition } from '../../domain/registry/resource.definition.ts';

export const kindOf = (r: ResourceDefinition): SandboxInfo['kind'] =>
  r.type === 'git-checkout' ? 'git-worktree' : 'copy';

/** `ns/name` → `ns.name`: segments never contain a dot, so distinct names give distinct directories. */
export const slug = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, '.');

/** True when `child` is strictly inside `parent`. */
export const inside = (parent: string, child: string): boolean => {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
};

export const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );

export const existsSync = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/** The real path of `p`, which may not exist yet: its nearest existing ancestor resolved, the rest appended. */
export async function realish(p: string): Promise<string> {
  const real = await realpath(p).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = path.dirname(p);
  return parent === p ? p : path.join(await realish(parent), path.basename(p));
}

export const infoFile = (dir: string): string => `${dir}.sandbox.json`;

/** Where a sandbox's confined git exchanges its requests (beside the sandbox, never inside it). */
export const ioDir = (dir: string): string => `${dir}.git-io`;

export async function readInfo(dir: string): Promise<SandboxInfo | undefined> {
  const text = await readFile(infoFile(dir), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as SandboxInfo);
}

export async function writeInfo(info: SandboxInfo): Promise<void> {
  const file = infoFile(info.root);
  await writeFile(`${file}.tmp`, JSON.stringify(info, null, 2));
  await rename(`${file}.tmp`, file);
}

/** Files whose change alters how other paths are staged: a checkpoint of known paths leaves them to a full scan. */
const RULE_FILES = new Set(['.gitignore', '.gitattributes', '.gitmodules']);
/** More known paths than this, and scanning the whole sandbox is no slower. */
const MAX_KNOWN_PATHS = 256;

/**
 * Whether the paths a step wrote can be checkpointed on their own: few enough; each relative and
 * plain (no `.`, `..`, `.git`, empty segment); none an ignore, attribute or submodule file; none
 * reached through a symlink, a nested repository or a submodule path (`gitlinks`).
 */
export function knownPathsUsable(root: string, paths: readonly string[], gitlinks: readonly string[]): boolean {
  if (paths.length > MAX_KNOWN_PATHS) return false;
  const links = new Set(gitlinks);
  for (const p of paths) {
    if (p === '' || p.startsWith('/') || /[\0]/.test(p)) return false;
    const segs = p.split('/');
    if (segs.some((s) => s === '' || s === '.' || s === '..' || s.toLowerCase() === '.git')) return false;
    if (RULE_FILES.has((segs.at(-1) ?? '').toLowerCase())) return false;
    for (let i = 1; i < segs.length; i++) {
      const dir = segs.slice(0, i).join('/');
      if (links.has(dir)) return false;
      let st;
      try {
        st = lstatSync(path.join(root, dir));
      } catch {
        break;
      }
      if (!st.isDirectory() || existsSync(path.join(root, dir, '.git'))) return false;
    }
  }
  return true;
}

const SAME_DATA_DIR =
  'every instance on one database must mount the same data directory (--data-dir) at the same path; see the README, "Several instances on PostgreSQL"';

/**
 * A plan's sandbox that this instance cannot see: `root` is under this instance's sandbox
 * directory `base` but nothing is there (a shared volume not mounted here, or it was removed).
 */
export function unreachable(root: string, base: string): AppError {
  return notHere(root, base, SAME_DATA_DIR);
}

/**
 * A plan's sandbox outside this instance's sandbox directory: another instance, with another data
 * directory, made it. Its own sandbox directory is `<dir>/<planId>/<resource>` two levels up.
 */
export function elsewhere(root: string, base: string): AppError {
  const theirs = path.dirname(path.dirname(root));
  return notHere(
    root,
    base,
    `it is in ${theirs}, the sandbox directory of the instance that executed the plan: run this on that instance; ${SAME_DATA_DIR}`,
  );
}

function notHere(root: string, base: string, hint: string): AppError {
  return new AppError(
    'UNAVAILABLE',
    `The plan's sandbox ${root} is not reachable from this instance (${hostname()}), whose sandbox directory is ${base}`,
    { details: { sandbox: root, sandboxDirectory: base, host: hostname() }, hint },
  );
}

/** A file's lstat, or undefined when there is nothing there (an apply's writes check each path). */
export function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** Removes the directories of `rel` under `dir` that a deletion left empty, deepest first. */
export function pruneEmptyParents(dir: string, rel: string): void {
  const parts = rel.split('/').slice(0, -1);
  while (parts.length > 0) {
    try {
      rmdirSync(path.join(dir, ...parts));
    } catch {
      return;
    }
    parts.pop();
  }
}

/**
 * `root` if it is a sandbox of this instance (`<base>/<planId>/<resource>`, `base` our sandbox
 * directory resolved or as `configured`). Several server instances share one database: a plan made
 * on one is worked on by any, so every instance must see the same sandbox directory at the same
 * path; a sandbox outside ours was made by an instance with another data directory (UNAVAILABLE:
 * it is there, not here), and one of ours that is missing is unreachable (unless `mustExist` is false).
 */
export async function ownedRoot(given: string, base: string, configured: string, mustExist: boolean): Promise<string> {
  const root = path.resolve(given);
  const ok = [base, configured].some((b) => {
    const rel = path.relative(b, root).split(path.sep);
    return inside(b, root) && rel.length === 2 && rel.every((s) => s !== '' && s !== '.' && s !== '..');
  });
  if (!ok) throw elsewhere(root, base);
  if (mustExist && !(await exists(root))) throw unreachable(root, configured);
  return root;
}
