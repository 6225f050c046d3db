/**
 * Instruction files (DESIGN.md §4.5): `AGENTS.md` and `CLEVERAGENTS.md` at the root of each
 * resource of a project and in its folders, and the files the project (`settings.context.
 * instructions.files`) and the plan's action (`instructions`) name. They come from the resource's
 * listing, so what `.gitignore` hides (and symbolic links) is never read; a named path is looked
 * up in the listing too, never opened as given.
 *
 * Which are read: every root's; a folder's when a file in play lies under it (a file the context
 * selected, or a path the goal or the decisions name); the named ones. The order the actor reads
 * them in: the folders' nearest to the files in play first (deepest first), then the roots, then
 * those named by the project, then by the action; within a folder AGENTS.md before CLEVERAGENTS.md.
 * When the limits cannot hold them all, the roots' are kept first, then the action's, the
 * project's, then the folders' in reading order; a file that does not fit is left out (with its
 * reason) and the next one tried. A file larger than maxFileSize is cut to it (`truncated`).
 *
 * They are not candidates for the file part of the context (their text is given once), and the
 * view's include/exclude globs, which choose those candidates, do not apply to them.
 */
import { createHash } from 'node:crypto';
import { INSTRUCTION_FILE_NAMES, type EffectiveContextSettings } from '../../domain/context/context.ts';
import type { FileInventory, InventoryEntry } from '../ports/file-inventory.port.ts';
import type { TokenCounter } from '../ports/language-model.port.ts';
import { estimateTokens } from './context-fill.ts';
import { findPath, STATUS, type Pool } from './context-ranking.ts';
import { joinRelative, namedRefs } from './context-terms.ts';
import type { AssembledContext, InstructionExclusion, InstructionFile } from './context.types.ts';

type Source = 'root' | 'folder' | 'project' | 'action';
/** Reading order of the groups, and which are kept first when not all fit. */
const READING: readonly Source[] = ['folder', 'root', 'project', 'action'];
const PRIORITY: readonly Source[] = ['root', 'action', 'project', 'folder'];

interface Candidate {
  pool: Pool;
  path: string;
  source: Source;
  why: string;
  /** Folders: depth of the folder (deeper first); then the order the files in play came in. */
  depth: number;
  seq: number;
}

interface Read {
  /** What the read was made of (a cached read is reused while these hold). */
  mtimeMs: number;
  max: number;
  bytes: number;
  text: string;
  tokens: number;
  truncated: boolean;
  kind: 'text' | 'binary' | 'unreadable';
}

/** Reads of instruction files kept between assemblies, by resource root and path (least recently used evicted). */
export class InstructionCache {
  private readonly map = new Map<string, Read>();
  private readonly max: number;

  constructor(max = 256) {
    this.max = max;
  }
  get(key: string, e: InventoryEntry, maxBytes: number): Read | undefined {
    const r = this.map.get(key);
    if (!r || r.bytes !== e.bytes || r.mtimeMs !== e.mtimeMs || r.max !== maxBytes) return undefined;
    this.map.delete(key);
    this.map.set(key, r);
    return r;
  }
  set(key: string, r: Read): void {
    this.map.delete(key);
    this.map.set(key, r);
    for (const k of this.map.keys()) {
      if (this.map.size <= this.max) break;
      this.map.delete(k);
    }
  }
}

export type InstructionFragment = AssembledContext['instructionFragments'][number];

export interface InstructionSelection {
  files: InstructionFile[];
  fragments: InstructionFragment[];
  /** Tokens of the included ones. */
  used: number;
  /** Paths of the candidates considered (to tell whether more came into play). */
  considered: number;
}

const isInstructionName = (p: string): boolean =>
  (INSTRUCTION_FILE_NAMES as readonly string[]).includes(p.slice(p.lastIndexOf('/') + 1));
const dirOf = (p: string): string => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');

/** Per listing: folder ('' the root) → its instruction files' paths in INSTRUCTION_FILE_NAMES order. */
const FOUND = new WeakMap<readonly InventoryEntry[], Map<string, string[]>>();
function found(files: readonly InventoryEntry[]): Map<string, string[]> {
  const known = FOUND.get(files);
  if (known) return known;
  const byDir = new Map<string, string[]>();
  for (const f of files) {
    if (!isInstructionName(f.path)) continue;
    const dir = dirOf(f.path);
    byDir.set(dir, [...(byDir.get(dir) ?? []), f.path]);
  }
  const rank = (p: string): number =>
    (INSTRUCTION_FILE_NAMES as readonly string[]).indexOf(p.slice(p.lastIndexOf('/') + 1));
  for (const list of byDir.values()) list.sort((a, b) => rank(a) - rank(b));
  FOUND.set(files, byDir);
  return byDir;
}

/** Every instruction file a listing holds (roots' and folders'), in path order. */
export function instructionFilesOf(files: readonly InventoryEntry[]): string[] {
  return [...found(files).values()].flat().sort();
}

/** A named path as the listing spells it (`./a//b` → `a/b`); undefined for one that climbs out. */
export function normalisePath(p: string): string | undefined {
  if (p.startsWith('/') || p.split(/[\\/]/).includes('..')) return undefined;
  const n = joinRelative('', p.replace(/\\/g, '/'));
  return n === undefined || n === '' ? undefined : n;
}

/** Paths (files or folders) the goal and the decisions name, as written. */
export function pathsNamed(texts: readonly string[]): string[] {
  const out = new Set<string>();
  for (const text of texts) {
    for (const r of namedRefs(text, 100)) if (r.kind !== 'python') out.add(r.spec);
    // A folder named as such (`src/api`, `src/api/`): the words with a slash.
    for (const m of text.matchAll(/(?<![\w/.-])((?:\.\/)?[\w@.-]{1,100}(?:\/[\w@.-]{1,100}){0,16}\/?)(?![\w/-])/g))
      if (m[1]?.includes('/')) out.add(m[1]);
  }
  return [...out];
}

export interface InstructionInput {
  pools: readonly Pool[];
  settings: EffectiveContextSettings['instructions'];
  /** Files named by the plan's action. */
  actionFiles: readonly string[];
  /** Paths the goal and the decisions name (see pathsNamed). */
  named: readonly string[];
  dryRun: boolean;
}

/**
 * Finds and reads a context's instruction files; `select` decides which fit. One per assembly:
 * what it read is kept for the assembly's later selections.
 */
export class Instructions {
  private readonly reads = new Map<string, Read>();
  private readonly fixed: Candidate[] = [];
  private readonly missing: InstructionFile[] = [];
  private readonly namedDirs: Array<{ pool: Pool; dir: string; file: string }> = [];

  private readonly input: InstructionInput;
  private readonly inventory: FileInventory;
  private readonly tokens: TokenCounter;
  private readonly cache: InstructionCache;

  constructor(input: InstructionInput, inventory: FileInventory, tokens: TokenCounter, cache: InstructionCache) {
    this.input = input;
    this.inventory = inventory;
    this.tokens = tokens;
    this.cache = cache;
    const { pools, settings } = input;
    let seq = 0;
    for (const pool of pools)
      for (const path of found(pool.listing.files).get('') ?? [])
        this.fixed.push({ pool, path, source: 'root', why: 'root', depth: 0, seq: seq++ });
    for (const [source, list] of [
      ['project', settings.files],
      ['action', input.actionFiles],
    ] as const)
      for (const given of list) {
        const path = normalisePath(given);
        const why = `named by ${source}`;
        const hits = path === undefined ? [] : pools.filter((p) => findPath(p.listing.files, path) !== undefined);
        for (const pool of hits) this.fixed.push({ pool, path: path as string, source, why, depth: 0, seq: seq++ });
        if (hits.length === 0 && pools[0])
          this.missing.push({
            resource: pools[0].resource,
            path: path ?? given,
            bytes: 0,
            tokens: 0,
            truncated: false,
            why,
            included: false,
            excludedBy: 'missing',
          });
      }
    for (const spec of input.named) {
      const path = normalisePath(spec.replace(/\/$/, ''));
      if (path === undefined) continue;
      for (const pool of pools) {
        const files = pool.listing.files;
        if (findPath(files, path) !== undefined) this.namedDirs.push({ pool, dir: dirOf(path), file: path });
        else if (holdsFolder(files, path)) this.namedDirs.push({ pool, dir: path, file: `${path}/` });
      }
    }
  }

  /**
   * The pools' status with every instruction file (found by name, or named and listed) marked as
   * such: not a candidate for the file part. A pool without any keeps its status array.
   */
  markPools(): void {
    for (const pool of this.input.pools) {
      const ids: number[] = [];
      for (const list of found(pool.listing.files).values())
        for (const p of list) {
          const i = findPath(pool.listing.files, p);
          if (i !== undefined) ids.push(i);
        }
      for (const c of this.fixed)
        if (c.pool === pool) {
          const i = findPath(pool.listing.files, c.path);
          if (i !== undefined) ids.push(i);
        }
      if (ids.length === 0) continue;
      const status = pool.status.slice();
      for (const i of ids) status[i] = STATUS.instruction;
      pool.status = status;
    }
  }

  /**
   * Which fit in `limit` tokens, given the files in play (the included files, in rank order): the
   * candidates in priority order, each included when it fits (else left out, and the next tried).
   * `maxTokens` tells a cut by the instructions' own limit from one by the context's budget.
   */
  async select(
    inPlay: ReadonlyArray<{ resource: string; path: string }>,
    limit: number,
    signal?: AbortSignal,
  ): Promise<InstructionSelection> {
    const candidates = this.candidates(inPlay);
    const byPriority = [...candidates].sort((a, b) => PRIORITY.indexOf(a.source) - PRIORITY.indexOf(b.source));
    const max = this.input.settings.maxTokens;
    const verdict = new Map<Candidate, { read: Read; excludedBy?: InstructionExclusion }>();
    let used = 0;
    for (const c of byPriority) {
      signal?.throwIfAborted();
      const read = await this.read(c);
      let excludedBy: InstructionExclusion | undefined;
      if (read.kind !== 'text') excludedBy = read.kind;
      else if (used + read.tokens > max) excludedBy = 'max-tokens';
      else if (used + read.tokens > limit) excludedBy = 'token-budget';
      else used += read.tokens;
      verdict.set(c, { read, ...(excludedBy ? { excludedBy } : {}) });
    }
    const ordered = [...candidates].sort(
      (a, b) =>
        READING.indexOf(a.source) - READING.indexOf(b.source) ||
        (a.source === 'folder' ? b.depth - a.depth : 0) ||
        a.seq - b.seq,
    );
    const files: InstructionFile[] = [];
    const left: InstructionFile[] = [];
    const fragments: InstructionFragment[] = [];
    for (const c of ordered) {
      const v = verdict.get(c) as { read: Read; excludedBy?: InstructionExclusion };
      const f: InstructionFile = {
        resource: c.pool.resource,
        path: c.path,
        bytes: v.read.bytes,
        tokens: v.read.tokens,
        truncated: v.read.truncated,
        why: c.why,
        included: v.excludedBy === undefined,
        ...(v.excludedBy ? { excludedBy: v.excludedBy } : {}),
      };
      if (v.excludedBy) left.push(f);
      else {
        files.push(f);
        if (!this.input.dryRun)
          fragments.push({
            resource: f.resource,
            path: f.path,
            tokens: f.tokens,
            bytes: f.bytes,
            truncated: f.truncated,
            why: f.why,
            text: v.read.text,
          });
      }
    }
    return { files: [...files, ...left, ...this.missing], fragments, used, considered: candidates.length };
  }

  /** The roots' and the named files, and the folders' of the files in play (each file once, its first reason kept). */
  private candidates(inPlay: ReadonlyArray<{ resource: string; path: string }>): Candidate[] {
    const out: Candidate[] = [];
    const seen = new Set<string>();
    const add = (c: Candidate): void => {
      const key = `${c.pool.resource}\0${c.path}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.push(c);
    };
    for (const c of [...this.fixed].sort((a, b) => PRIORITY.indexOf(a.source) - PRIORITY.indexOf(b.source))) add(c);
    let seq = this.fixed.length;
    const inFolders = (pool: Pool, dir: string, file: string): void => {
      const byDir = found(pool.listing.files);
      for (let d = dir; d !== ''; d = dirOf(d)) {
        const depth = d.split('/').length;
        for (const path of byDir.get(d) ?? [])
          add({ pool, path, source: 'folder', why: `folder of ${file}`, depth, seq: seq++ });
      }
    };
    for (const n of this.namedDirs) inFolders(n.pool, n.dir, n.file);
    for (const f of inPlay) {
      const pool = this.input.pools.find((p) => p.resource === f.resource);
      if (pool) inFolders(pool, dirOf(f.path), f.path);
    }
    return out;
  }

  private async read(c: Candidate): Promise<Read> {
    const key = `${c.pool.resource}\0${c.path}`;
    const known = this.reads.get(key);
    if (known) return known;
    const max = this.input.settings.maxFileSize;
    const read = this.input.dryRun ? this.estimate(c) : await this.readNow(c, max);
    this.reads.set(key, read);
    return read;
  }

  /** A dry run reads nothing: the size from the listing, tokens estimated from it. */
  private estimate(c: Candidate): Read {
    const max = this.input.settings.maxFileSize;
    const i = findPath(c.pool.listing.files, c.path);
    const e = i === undefined ? undefined : (c.pool.listing.files[i] as InventoryEntry);
    const bytes = e?.bytes ?? 0;
    const tokens = estimateTokens(Math.min(bytes, max));
    return { mtimeMs: e?.mtimeMs ?? 0, max, bytes, text: '', tokens, truncated: bytes > max, kind: 'text' };
  }

  private async readNow(c: Candidate, max: number): Promise<Read> {
    const [fresh] = await this.inventory.restat(c.pool.root, [c.path]);
    const gone: Read = { mtimeMs: 0, max, bytes: 0, text: '', tokens: 0, truncated: false, kind: 'unreadable' };
    if (!fresh) return gone;
    const key = `${c.pool.root}\0${c.path}`;
    const known = this.cache.get(key, fresh, max);
    if (known) return known;
    const r = await this.inventory.read(c.pool.root, c.path, max);
    if (r.kind === 'unreadable') return gone;
    let read: Read;
    if (r.kind === 'text') {
      // A cut may end inside a multi-byte character: drop its remains.
      const text = r.truncated ? r.text.replace(/\uFFFD+$/, '') : r.text;
      const tokens = await this.tokens.count(text);
      read = { mtimeMs: r.mtimeMs, max, bytes: r.bytes, text, tokens, truncated: r.truncated, kind: 'text' };
    } else read = { mtimeMs: r.mtimeMs, max, bytes: r.bytes, text: '', tokens: 0, truncated: false, kind: 'binary' };
    this.cache.set(key, read);
    return read;
  }
}

/** Whether some listed file lies under the folder (the listing is sorted by path). */
function holdsFolder(files: readonly InventoryEntry[], dir: string): boolean {
  const prefix = `${dir}/`;
  let lo = 0;
  let hi = files.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((files[mid] as InventoryEntry).path < prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo < files.length && (files[lo] as InventoryEntry).path.startsWith(prefix);
}

/** The files' snapshot, and the included instruction files' (path, size, text) when there are any. */
export function withInstructions(snapshot: string, s: InstructionSelection): string {
  const read = s.files.filter((f) => f.included);
  if (read.length === 0) return snapshot;
  const h = createHash('sha256').update(`${snapshot}\n`);
  const texts = new Map(s.fragments.map((f) => [`${f.resource}\0${f.path}`, f.text]));
  for (const f of read)
    h.update(`${f.resource}\0${f.path}\0${f.bytes}\0${texts.get(`${f.resource}\0${f.path}`) ?? ''}\n`);
  return `sha256:${h.digest('hex')}`;
}
