/**
 * The project as the reading tools (grep, glob, list) walk it: what git would show — `.git` never,
 * `node_modules` not entered, `.gitignore` rules applied (those of the directories above the start
 * too, as git applies them), a deeper file's rule winning over a shallower one's. Symbolic links
 * are listed but never followed (their target is outside — refused — or walked under its own path).
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';

/** Directories never entered: not the project's own files, and often huge. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

interface Rules {
  /** The directory the rules are in, relative to the root, with a trailing `/` ('' for the root). */
  base: string;
  ig: Ignore;
}

export interface ProjectEntry {
  name: string;
  /** Relative to the root, `/`-separated. */
  rel: string;
  abs: string;
  kind: 'file' | 'dir' | 'symlink';
}

/** One directory's entries that are not skipped or ignored, sorted by name, and the rules below it. */
export interface DirListing {
  entries: ProjectEntry[];
  rules: readonly Rules[];
}

/**
 * Where a walk starts: `rel` (relative to the root, '' for the root) with the rules of the
 * directories above it. A start that is itself ignored was asked for by name: it is walked without
 * them.
 */
export async function startAt(root: string, rel: string): Promise<readonly Rules[]> {
  let rules: readonly Rules[] = [];
  const parts = rel === '' ? [] : rel.split('/');
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    rules = await withGitignore(root, dir, rules);
    if (ignored(rules, parts.slice(0, i + 1).join('/'), true)) return [];
  }
  return rules;
}

/** The entries of `dirRel` (relative to the root), with its own `.gitignore` added to `rules`. */
export async function listDir(root: string, dirRel: string, rules: readonly Rules[]): Promise<DirListing> {
  const abs = dirRel === '' ? root : path.join(root, dirRel);
  let dirents;
  try {
    dirents = await readdir(abs, { withFileTypes: true });
  } catch {
    return { entries: [], rules }; // unreadable (or gone meanwhile): nothing to list
  }
  const own = dirents.some((d) => d.name === '.gitignore' && d.isFile())
    ? await withGitignore(root, dirRel, rules)
    : rules;
  const entries: ProjectEntry[] = [];
  for (const d of dirents) {
    const kind = d.isDirectory() ? 'dir' : d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : undefined;
    if (!kind || (kind === 'dir' && SKIPPED_DIRS.has(d.name))) continue;
    const rel = dirRel === '' ? d.name : `${dirRel}/${d.name}`;
    if (ignored(own, rel, kind === 'dir')) continue;
    entries.push({ name: d.name, rel, abs: path.join(abs, d.name), kind });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, rules: own };
}

/**
 * The files under `startRel` (a directory), depth first in name order, at most `limit` entries
 * visited; `truncated` when the limit or the signal stopped it.
 */
export async function projectFiles(
  root: string,
  startRel: string,
  limit: number,
  signal: AbortSignal,
): Promise<{ files: ProjectEntry[]; truncated: boolean }> {
  const files: ProjectEntry[] = [];
  let visited = 0;
  const visit = async (dirRel: string, rules: readonly Rules[]): Promise<boolean> => {
    const listing = await listDir(root, dirRel, rules);
    for (const e of listing.entries) {
      if (signal.aborted || ++visited > limit) return false;
      if (e.kind === 'dir') {
        if (!(await visit(e.rel, listing.rules))) return false;
      } else files.push(e);
    }
    return true;
  };
  const complete = await visit(startRel, await startAt(root, startRel));
  return { files, truncated: !complete };
}

async function withGitignore(root: string, dirRel: string, rules: readonly Rules[]): Promise<readonly Rules[]> {
  const file = path.join(root, dirRel, '.gitignore');
  const st = await lstat(file).catch(() => undefined);
  if (!st?.isFile()) return rules;
  const text = await readFile(file, 'utf8').catch(() => '');
  return [...rules, { base: dirRel === '' ? '' : `${dirRel}/`, ig: ignore().add(text) }];
}

/** The deepest `.gitignore` with an opinion on the path decides. */
function ignored(rules: readonly Rules[], rel: string, isDir: boolean): boolean {
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i] as Rules;
    if (!rel.startsWith(r.base)) continue;
    let t;
    try {
      t = r.ig.test(rel.slice(r.base.length) + (isDir ? '/' : ''));
    } catch {
      continue; // a name the package refuses as a path: no rule of this file applies
    }
    if (t.ignored) return true;
    if (t.unignored) return false;
  }
  return false;
}
