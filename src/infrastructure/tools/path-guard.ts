/**
 * Keeps tool paths inside the sandbox. A path is resolved lexically against the root, then every
 * symlink on the way is followed — including a dangling one, whose target is where a write would
 * land — and the real location must still be inside the root's real path.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../../domain/errors.ts';

/** A refused path; the message is the one-line summary the tool call reports. */
export class PathRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefusedError';
  }
}

export interface ResolvedPath {
  /** Where the path really is (symlinks followed), absolute. */
  real: string;
  /** `real` relative to the sandbox's real root, with `/` separators ('' for the root itself). */
  rel: string;
}

const MAX_LINKS = 40;

/**
 * Resolves `p` (relative to `root`, or absolute inside it) to its real location in the sandbox.
 * Refuses NUL bytes, escapes by `..`, absolute paths outside the root, symlinks (of the path or of
 * any parent) that lead outside, and — when `write` — anything inside a `.git` directory or the
 * `.git` file itself.
 */
export async function resolveInSandbox(
  root: string,
  p: unknown,
  opts: { write?: boolean } = {},
): Promise<ResolvedPath> {
  if (typeof p !== 'string') throw new PathRefusedError('path must be a string');
  const shown = JSON.stringify(p);
  if (p.includes('\0')) throw new PathRefusedError(`path ${shown} escapes the sandbox (it contains a NUL byte)`);
  const realRoot = await realpath(root);
  const lexical = path.resolve(root, p);
  if (!within(path.resolve(root), lexical) && !within(realRoot, lexical))
    throw new PathRefusedError(`path ${shown} escapes the sandbox`);
  const inGit = (rel: string): boolean => rel.split(/[\\/]/).some((seg) => seg.toLowerCase() === '.git');
  const refuseGit = (): never => {
    throw new PathRefusedError(`path ${shown} is inside .git; writes there are refused`);
  };
  if (opts.write && inGit(path.relative(path.resolve(root), lexical))) refuseGit();
  let real: string;
  try {
    real = await realLoose(
      within(path.resolve(root), lexical) ? path.join(realRoot, path.relative(path.resolve(root), lexical)) : lexical,
      0,
    );
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new PathRefusedError(`path ${shown} escapes the sandbox (too many symlinks)`);
    throw new PathRefusedError(`path ${shown} cannot be resolved: ${messageOf(e)}`);
  }
  if (!within(realRoot, real)) throw new PathRefusedError(`path ${shown} escapes the sandbox (through a symlink)`);
  const rel = path.relative(realRoot, real).split(path.sep).join('/');
  if (opts.write && inGit(rel)) refuseGit();
  return { real, rel };
}

/** `p` as written, normalised and relative to the root (`/`-separated, '' for the root); check it first. */
export function lexicalRel(root: string, p: string): string {
  return path.relative(path.resolve(root), path.resolve(root, p)).split(path.sep).join('/');
}

/** True when `p` is `dir` or inside it. */
export function within(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * `realpath` that also works for paths that do not exist yet: the nearest existing ancestor is
 * resolved and the rest appended; a dangling symlink is followed to where it points.
 */
async function realLoose(p: string, links: number): Promise<string> {
  if (links > MAX_LINKS) throw Object.assign(new Error('too many symlinks'), { code: 'ELOOP' });
  try {
    return await realpath(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const st = await lstat(p).catch(() => undefined);
  if (st?.isSymbolicLink()) return realLoose(path.resolve(path.dirname(p), await readlink(p)), links + 1);
  const parent = path.dirname(p);
  if (parent === p) return p;
  return path.join(await realLoose(parent, links), path.basename(p));
}
