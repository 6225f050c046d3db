/**
 * The files of resources on this machine (the FileInventory port): git checkouts through one
 * `git ls-files` plus a stat of each file, other directories through a walk with `.gitignore`
 * rules (./ignore-walk.ts).
 *
 * Caching. The listings of the last `maxRoots` roots (default 8, and at most `maxCachedFiles`
 * entries together, default 1,000,000 — about 160 bytes each, path included) are kept, least recently used
 * evicted first. A cached listing is revalidated by stat alone, without starting git:
 * - git: the index (mtime, size), `.git/info/exclude`, every `.gitignore` listed, and the mtime of
 *   every directory holding a listed file (and their parents up to the root);
 * - walk: every directory entered and every `.gitignore` read.
 * A file added or removed changes its directory's mtime; a `git add`/`rm`/`checkout`/`commit`
 * rewrites the index. Any change relists the root from scratch.
 *
 * What a cache hit can miss, and why that is acceptable:
 * - an in-place edit (same directory entries) of a file: its size and mtime in the listing stay
 *   old. The context service re-stats (`restat`) every file it considers for inclusion before it
 *   reads or counts it, so what an actor sees is always current; only a file that was cut before
 *   that point (for its old size, or because the limits were full) keeps its old size, and the
 *   per-resource byte total can be off by the edits' difference. Such a file was not shown anyway.
 * - a new file in a directory that holds no listed file (an untracked directory whose files were
 *   all ignored) until something else changes: only directories holding listed files are
 *   stat'ed, to keep revalidation proportional to what is listed. (A `.gitignore` change that
 *   un-ignores such files is seen: the `.gitignore` files are watched.)
 * - changes to the global excludes file (`core.excludesFile`), which is not watched.
 * - a file added to a directory in the instant between `git ls-files` reading it and the stat
 *   that records its mtime (a window of milliseconds, once per new listing).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import type {
  FileInventory,
  FileListing,
  FileRead,
  GitRecency,
  GlobVerdict,
  InventoryEntry,
} from '../../application/index.ts';
import { AppError, messageOf } from '../../domain/errors.ts';
import { compileFilter, compileGlob } from '../tools/glob.ts';
import { gitRootOf, headOf, lsFiles, readHead, recentPaths, type GitRoot } from './git-listing.ts';
import { SLICE, walk, yieldNow, type Check } from './ignore-walk.ts';

export interface FsFileInventoryOptions {
  /** Roots whose listing is kept (default 8). */
  maxRoots?: number;
  /** Entries kept over all roots (default 1,000,000). */
  maxCachedFiles?: number;
  /** A listing stops (truncated) after this many files (default 1,000,000). */
  maxFilesPerRoot?: number;
}

interface Entry {
  root: string;
  source: 'git' | 'walk';
  files: InventoryEntry[];
  checks: Check[];
  truncated: boolean;
  git: GitRoot | undefined;
}

/** How many bytes at the start of a file are searched for a NUL (git's own heuristic looks at 8000). */
const BINARY_PROBE = 8000;

export class FsFileInventory implements FileInventory {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();
  private readonly recencies = new Map<string, { git: GitRoot; recency: GitRecency }>();
  private readonly maxRoots: number;
  private readonly maxCachedFiles: number;
  private readonly maxFilesPerRoot: number;

  constructor(opts: FsFileInventoryOptions = {}) {
    this.maxRoots = opts.maxRoots ?? 8;
    this.maxCachedFiles = opts.maxCachedFiles ?? 1_000_000;
    this.maxFilesPerRoot = opts.maxFilesPerRoot ?? 1_000_000;
  }

  async list(root: string, signal?: AbortSignal): Promise<FileListing> {
    const key = path.resolve(root);
    const cached = this.cache.get(key);
    if (cached && (await stillValid(cached.checks))) {
      this.touch(key, cached);
      return view(root, cached, true);
    }
    const entry = await this.build(key, signal);
    return view(root, entry, false);
  }

  async restat(root: string, paths: readonly string[]): Promise<Array<InventoryEntry | undefined>> {
    const key = path.resolve(root);
    const entry = this.cache.get(key);
    const out: Array<InventoryEntry | undefined> = [];
    for (let i = 0; i < paths.length; i++) {
      if (i > 0 && i % SLICE === 0) await yieldNow();
      const p = paths[i] as string;
      const st = safeRelative(p) ? lstatSync(`${key}/${p}`, { throwIfNoEntry: false }) : undefined;
      const fresh = st?.isFile() ? { path: p, bytes: st.size, mtimeMs: st.mtimeMs } : undefined;
      out.push(fresh);
      const at = fresh && entry ? indexOf(entry, p) : undefined;
      if (at !== undefined && entry) {
        const old = entry.files[at] as InventoryEntry;
        if (old.bytes !== fresh?.bytes || old.mtimeMs !== fresh.mtimeMs) entry.files[at] = fresh as InventoryEntry;
      }
    }
    return out;
  }

  read(root: string, p: string, maxBytes: number): Promise<FileRead> {
    if (!safeRelative(p)) return Promise.resolve({ kind: 'unreadable', reason: 'not a relative path inside the root' });
    let fd: number | undefined;
    try {
      // O_NOFOLLOW: a symbolic link is not read (it could point outside the resource).
      fd = openSync(`${path.resolve(root)}/${p}`, constants.O_RDONLY | constants.O_NOFOLLOW);
      const st = fstatSync(fd);
      if (!st.isFile()) return Promise.resolve({ kind: 'unreadable', reason: 'not a regular file' });
      const want = Math.max(0, Math.min(st.size, maxBytes));
      const buf = Buffer.allocUnsafe(want);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, buf, got, want - got, got);
        if (n === 0) break;
        got += n;
      }
      const bytes = buf.subarray(0, got);
      if (bytes.subarray(0, BINARY_PROBE).includes(0))
        return Promise.resolve({ kind: 'binary', bytes: st.size, mtimeMs: st.mtimeMs });
      return Promise.resolve({
        kind: 'text',
        text: bytes.toString('utf8'),
        bytes: st.size,
        mtimeMs: st.mtimeMs,
        truncated: st.size > got,
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const reason =
        code === 'ELOOP' ? 'a symbolic link' : code === 'ENOENT' ? 'gone' : `cannot be read (${code ?? 'error'})`;
      return Promise.resolve({ kind: 'unreadable', reason });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Needs no listing (it may run while one is made); kept per root, reused while HEAD stays. */
  async recency(root: string): Promise<GitRecency | undefined> {
    const key = path.resolve(root);
    const known = this.recencies.get(key);
    if (known && readHead(known.git) === known.recency.head) return known.recency;
    const g = await gitRootOf(key);
    if (g === undefined) return undefined;
    const head = await headOf(key, g);
    if (head === undefined) return undefined;
    if (known?.recency.head === head) return known.recency;
    let recent;
    try {
      recent = await recentPaths(key);
    } catch {
      return undefined; // no history to rank by (e.g. a shallow clone's missing objects)
    }
    const recency: GitRecency = { head, commits: recent.commits, paths: recent.paths };
    this.recencies.delete(key);
    this.recencies.set(key, { git: g, recency });
    for (const k of this.recencies.keys()) {
      if (this.recencies.size <= this.maxRoots) break;
      this.recencies.delete(k);
    }
    return recency;
  }

  globFilter(include: readonly string[], exclude: readonly string[]): (path: string) => GlobVerdict {
    for (const [field, list] of [
      ['include', include],
      ['exclude', exclude],
    ] as const)
      list.forEach((g, i) => {
        try {
          compileGlob(g);
        } catch (err) {
          throw new AppError('INVALID_PARAMS', `The glob ${JSON.stringify(g)} cannot be used`, {
            fields: [{ field: `${field}.${i}`, description: `is not a glob pattern (${messageOf(err)})` }],
            hint: '`**` spans directories, `*` and `?` stay within one, `{a,b}` is an alternative, `[…]` a class',
          });
        }
      });
    const inc = compileFilter(include, []);
    const exc = compileFilter([], exclude);
    return (p) => (!inc(p) ? 'not-included' : !exc(p) ? 'excluded' : 'included');
  }

  private build(key: string, signal?: AbortSignal): Promise<Entry> {
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.listFresh(key, signal).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  private async listFresh(key: string, signal?: AbortSignal): Promise<Entry> {
    const st = lstatSync(key, { throwIfNoEntry: false });
    if (!st?.isDirectory())
      throw new AppError('UNAVAILABLE', `${key} is not a directory that can be listed`, {
        details: { path: key },
        hint: 'check the resource: `agents resource show <name>` says whether its path exists',
      });
    const gitRoot = await gitRootOf(key);
    signal?.throwIfAborted();
    let entry: Entry;
    if (gitRoot) {
      let paths: string[];
      try {
        paths = await lsFiles(key);
      } catch (err) {
        throw new AppError('UNAVAILABLE', `git could not list the files of ${key}`, {
          details: { path: key },
          hint: 'run `git status` there to see what is wrong with the checkout',
          cause: err,
        });
      }
      const { files, checks, truncated } = await statListed(key, gitRoot, paths, this.maxFilesPerRoot, signal);
      entry = { root: key, source: 'git', files, checks, truncated, git: gitRoot };
    } else {
      const w = await walk(key, this.maxFilesPerRoot, signal);
      entry = { root: key, source: 'walk', ...w, git: undefined };
    }
    this.touch(key, entry);
    return entry;
  }

  private touch(key: string, entry: Entry): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    let total = 0;
    for (const e of this.cache.values()) total += e.files.length;
    for (const [k, e] of this.cache) {
      if (this.cache.size <= 1 || (this.cache.size <= this.maxRoots && total <= this.maxCachedFiles)) break;
      this.cache.delete(k);
      total -= e.files.length;
    }
  }
}

function view(root: string, e: Entry, fromCache: boolean): FileListing {
  return { root, source: e.source, files: e.files, fromCache, truncated: e.truncated };
}

/** Binary search: the listing is sorted by path. */
function indexOf(e: Entry, p: string): number | undefined {
  let lo = 0;
  let hi = e.files.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const q = (e.files[mid] as InventoryEntry).path;
    if (q === p) return mid;
    if (q < p) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** Stat each path `git ls-files` gave, recording what revalidation needs. */
async function statListed(
  root: string,
  g: GitRoot,
  paths: string[],
  max: number,
  signal?: AbortSignal,
): Promise<{ files: InventoryEntry[]; checks: Check[]; truncated: boolean }> {
  const files: InventoryEntry[] = [];
  const dirs = new Set<string>(['']);
  const checks: Check[] = [];
  let lastDir = '';
  let sorted = true;
  let truncated = false;
  for (let i = 0; i < paths.length; i++) {
    if (i > 0 && i % SLICE === 0) {
      await yieldNow();
      signal?.throwIfAborted();
    }
    const p = paths[i] as string;
    const slash = p.lastIndexOf('/');
    if (slash === p.length - 1) continue; // a nested repository's directory
    const st = lstatSync(`${root}/${p}`, { throwIfNoEntry: false });
    if (!st?.isFile()) continue; // deleted but still in the index, a symlink, a submodule
    if (files.length >= max) {
      truncated = true;
      break;
    }
    const prev = files.at(-1);
    if (prev !== undefined && prev.path > p) sorted = false;
    files.push({ path: p, bytes: st.size, mtimeMs: st.mtimeMs });
    const dir = slash < 0 ? '' : p.slice(0, slash);
    if (dir !== lastDir) {
      lastDir = dir;
      for (let d = dir; d !== '' && !dirs.has(d); d = d.slice(0, Math.max(0, d.lastIndexOf('/')))) dirs.add(d);
    }
    if (p === '.gitignore' || p.endsWith('/.gitignore'))
      checks.push({ path: `${root}/${p}`, mtimeMs: st.mtimeMs, size: st.size });
  }
  if (!sorted) files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const d of dirs) {
    const full = d === '' ? root : `${root}/${d}`;
    checks.push({ path: full, mtimeMs: lstatSync(full, { throwIfNoEntry: false })?.mtimeMs ?? -1, size: -1 });
  }
  for (const f of [path.join(g.gitDir, 'index'), path.join(g.commonDir, 'info', 'exclude')]) {
    const st = lstatSync(f, { throwIfNoEntry: false });
    checks.push({ path: f, mtimeMs: st?.mtimeMs ?? -1, size: st?.size ?? -1 });
  }
  return { files, checks, truncated };
}

async function stillValid(checks: readonly Check[]): Promise<boolean> {
  for (let i = 0; i < checks.length; i++) {
    if (i > 0 && i % SLICE === 0) await yieldNow();
    const c = checks[i] as Check;
    const st = lstatSync(c.path, { throwIfNoEntry: false });
    if ((st?.mtimeMs ?? -1) !== c.mtimeMs) return false;
    if (c.size !== -1 && st?.size !== c.size) return false;
  }
  return true;
}

function safeRelative(p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '');
}
