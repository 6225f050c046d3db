/**
 * The files of a directory that is not a git checkout, with git's `.gitignore` rules (the `ignore`
 * package): a `.gitignore` applies below its directory, a deeper one's rule (negations too) wins
 * over a shallower one's, an ignored directory is not entered, `.git` never. Symbolic links are
 * neither followed nor listed. The file system is read synchronously in slices, yielding to the
 * event loop between them (async stat of 100k files costs ~4× the sync calls).
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import ignore, { type Ignore } from 'ignore';
import type { InventoryEntry } from '../../application/index.ts';

/** A file or directory whose mtime (and for files size) tells whether the listing is still valid. */
export interface Check {
  path: string;
  mtimeMs: number;
  /** Files only: their size; -1 for directories. */
  size: number;
}

export interface WalkResult {
  files: InventoryEntry[];
  /** Every directory entered and every `.gitignore` read: what revalidation re-stats. */
  checks: Check[];
  truncated: boolean;
}

interface Rules {
  /** The directory the rules are in, relative to the root, with a trailing `/` ('' for the root). */
  base: string;
  ig: Ignore;
}

export const SLICE = 2_000;
export const yieldNow = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function walk(root: string, maxFiles: number, signal?: AbortSignal): Promise<WalkResult> {
  const files: InventoryEntry[] = [];
  const checks: Check[] = [];
  const stack: Array<{ rel: string; rules: Rules[] }> = [{ rel: '', rules: [] }];
  let ops = 0;
  let truncated = false;
  while (stack.length > 0 && !truncated) {
    const { rel, rules: parentRules } = stack.pop() as { rel: string; rules: Rules[] };
    const dir = rel === '' ? root : `${root}/${rel.slice(0, -1)}`;
    // Stat before reading: a change after this read moves the mtime past the recorded one.
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory()) continue;
    checks.push({ path: dir, mtimeMs: st.mtimeMs, size: -1 });
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable directory: its files are not listed
    }
    let rules = parentRules;
    if (entries.some((e) => e.name === '.gitignore' && e.isFile())) {
      const file = `${dir}/.gitignore`;
      const gst = lstatSync(file, { throwIfNoEntry: false });
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // unreadable: no rules from it
      }
      checks.push({ path: file, mtimeMs: gst?.mtimeMs ?? -1, size: gst?.size ?? -1 });
      rules = [...parentRules, { base: rel, ig: ignore().add(text) }];
    }
    const subdirs: string[] = [];
    for (const e of entries) {
      if (++ops % SLICE === 0) {
        await yieldNow();
        signal?.throwIfAborted();
      }
      if (e.name === '.git') continue;
      const isDir = e.isDirectory();
      if (!isDir && !e.isFile()) continue; // symlinks, sockets, devices
      const p = rel + e.name;
      if (ignored(rules, p, isDir)) continue;
      if (isDir) {
        subdirs.push(`${p}/`);
        continue;
      }
      const fst = lstatSync(`${dir}/${e.name}`, { throwIfNoEntry: false });
      if (!fst?.isFile()) continue;
      if (files.length >= maxFiles) {
        truncated = true;
        break;
      }
      files.push({ path: p, bytes: fst.size, mtimeMs: fst.mtimeMs });
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push({ rel: subdirs[i] as string, rules });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, checks, truncated };
}

/** The deepest `.gitignore` with an opinion on the path decides. */
function ignored(rules: readonly Rules[], p: string, isDir: boolean): boolean {
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i] as Rules;
    let t;
    try {
      t = r.ig.test(p.slice(r.base.length) + (isDir ? '/' : ''));
    } catch {
      continue; // a name the package would refuse as a path: no rule of this file applies (rather than a failed walk)
    }
    if (t.ignored) return true;
    if (t.unignored) return false;
  }
  return false;
}
