/**
 * The repository map a chat turn gets instead of files (issue #37, "context by tools"): the
 * project's files in rank order, the best with their top-level symbols (source-symbols.ts), the
 * next by path only, the rest as a count, all within a token budget — so the model knows where
 * things are and reads what it needs with its tools. Shown as a tree (a folder's line once, its
 * files under it), which costs about half the tokens of full paths.
 *
 * What is costly is cached between turns: the listing and the history by the inventory, the
 * symbols of a file here by (root, path, size, mtime); a turn re-stats the files it shows.
 */
import type { FileInventory, InventoryEntry } from '../ports/file-inventory.port.ts';
import type { TokenCounter } from '../ports/language-model.port.ts';
import { locate, type Pool } from './context-ranking.ts';
import { languageOf, sourceSymbols, type SourceSymbol, type SymbolKind } from './source-symbols.ts';

/** The map's share of the model's window, and its ceiling (instruction files included). */
export const MAP_WINDOW_SHARE = 0.05;
export const MAP_MAX_TOKENS = 8_000;
/** Of the room the files get, what files with their symbols may take before the rest is paths only. */
export const SYMBOL_SHARE = 0.7;
/** Symbols shown for one file; more are counted ("+12 more"). */
export const SYMBOLS_PER_FILE = 16;
/** A file larger than this is named by path only (generated code, data, bundles). */
export const MAX_SYMBOL_FILE_BYTES = 256 * 1024;
const BATCH = 64;

/** The tokens a chat's map mode may use for a model's window. */
export function mapBudget(modelWindow: number): number {
  return Math.max(0, Math.min(MAP_MAX_TOKENS, Math.floor(modelWindow * MAP_WINDOW_SHARE)));
}

/** Symbols by (root, path), valid while the file's size and mtime are those they were read at. */
export class SymbolCache {
  private readonly map = new Map<string, { bytes: number; mtimeMs: number; symbols: SourceSymbol[] }>();
  private readonly max: number;

  constructor(max = 50_000) {
    this.max = max;
  }
  get(key: string, e: InventoryEntry): SourceSymbol[] | undefined {
    const s = this.map.get(key);
    if (!s || s.bytes !== e.bytes || s.mtimeMs !== e.mtimeMs) return undefined;
    return s.symbols;
  }
  set(key: string, e: { bytes: number; mtimeMs: number }, symbols: SourceSymbol[]): void {
    this.map.delete(key);
    this.map.set(key, { bytes: e.bytes, mtimeMs: e.mtimeMs, symbols });
    for (const k of this.map.keys()) {
      if (this.map.size <= this.max) break;
      this.map.delete(k);
    }
  }
}

/** A file's text (undefined: not text, or larger than maxBytes). */
export type FileText = (pool: Pool, entry: InventoryEntry, maxBytes: number) => Promise<string | undefined>;

export interface MapInput {
  project: string;
  pools: readonly Pool[];
  /** Every file the map may show, best first (global ids, see context-ranking.ts). */
  order: Iterable<number>;
  /** Tokens the map's text may have. */
  room: number;
  /** Instruction files the model was not given (in folders, or left out for room): named so it can read them. */
  otherInstructions: readonly string[];
  signal?: AbortSignal | undefined;
}

export interface RepoMap {
  /** Empty when not even the shortest form fits. */
  text: string;
  tokens: number;
  /** Files the map could show, and those it names (with symbols or by path). */
  files: number;
  shown: number;
  withSymbols: number;
}

interface Entry {
  pool: number;
  dir: string;
  base: string;
  /** `: function a, b; class C`, or '' (path only). */
  symbols: string;
}

export class RepoMapper {
  private readonly inventory: FileInventory;
  private readonly tokens: TokenCounter;
  private readonly read: FileText;
  private readonly symbols: SymbolCache;
  /** Token counts of the map's lines: the same lines come back turn after turn. */
  private readonly counts = new Map<string, number>();

  /** `read`: a file's text, shared with the assembly's cache (a file ranked by its text is read once). */
  constructor(inventory: FileInventory, tokens: TokenCounter, read: FileText, symbols = new SymbolCache()) {
    this.inventory = inventory;
    this.tokens = tokens;
    this.read = read;
    this.symbols = symbols;
  }

  async build(input: MapInput): Promise<RepoMap> {
    const ids = [...input.order];
    const files = ids.length;
    const none = { text: '', tokens: 0, files, shown: 0, withSymbols: 0 };
    const short = `Project ${input.project} has ${files} files: find them with the glob and list tools, search them with grep, read them with read.`;
    const shortTokens = await this.tokens.count(short);
    if (input.room < shortTokens) return none;
    const fixed = await this.tokens.count(this.frame(input, files, 0, 0));
    const room = input.room - fixed;
    if (room <= 0) return { ...none, text: short, tokens: shortTokens };

    const chosen = await this.choose(input, ids, room);
    // Per-entry counts add up to about the whole text's; the exact count decides, and the
    // lowest-ranked entries go until it fits.
    for (;;) {
      const text = this.render(input, chosen.entries, files, chosen.withSymbols());
      const tokens = await this.tokens.count(text);
      if (tokens <= input.room)
        return { text, tokens, files, shown: chosen.entries.length, withSymbols: chosen.withSymbols() };
      if (chosen.entries.length === 0) return { ...none, text: short, tokens: shortTokens };
      chosen.entries.splice(-Math.max(1, Math.ceil((tokens - input.room) / 4)));
    }
  }

  /** Entries in rank order: with symbols while they take less than SYMBOL_SHARE of the room, then paths until it is full. */
  private async choose(
    input: MapInput,
    ids: readonly number[],
    room: number,
  ): Promise<{ entries: Entry[]; withSymbols: () => number }> {
    const entries: Entry[] = [];
    const dirs = new Set<string>();
    const resources = new Set<number>();
    const multi = input.pools.length > 1;
    let used = 0;
    let symbolsOn = true;
    for (let at = 0; at < ids.length; at += BATCH) {
      const batch = ids.slice(at, at + BATCH);
      const syms = symbolsOn ? await this.batchSymbols(input.pools, batch) : new Map<number, SourceSymbol[]>();
      input.signal?.throwIfAborted();
      for (const id of batch) {
        const { pool, i } = locate(input.pools, id);
        const k = input.pools.indexOf(pool);
        const path = (pool.listing.files[i] as InventoryEntry).path;
        const slash = path.lastIndexOf('/');
        const dir = slash < 0 ? '' : path.slice(0, slash);
        const base = path.slice(slash + 1);
        let extra = 0;
        const dirKey = `${k}\0${dir}`;
        if (dir !== '' && !dirs.has(dirKey)) extra += await this.count(`${dir}/\n`);
        if (multi && !resources.has(k)) extra += await this.count(`[${pool.resource}]\n`);
        const list = symbolsOn ? symbolText(syms.get(id) ?? []) : '';
        const pathCost = await this.count(`  ${base}\n`);
        let cost = pathCost + extra;
        let symbols = '';
        if (list !== '') {
          const withSyms = pathCost + (await this.count(list)) + extra;
          if (used + withSyms <= room * SYMBOL_SHARE) {
            cost = withSyms;
            symbols = list;
          } else symbolsOn = false;
        }
        if (used + cost > room) return done(entries);
        used += cost;
        dirs.add(dirKey);
        resources.add(k);
        entries.push({ pool: k, dir, base, symbols });
      }
    }
    return done(entries);
  }

  private async count(line: string): Promise<number> {
    const known = this.counts.get(line);
    if (known !== undefined) return known;
    const n = await this.tokens.count(line);
    if (this.counts.size >= 100_000) this.counts.clear();
    this.counts.set(line, n);
    return n;
  }

  /** The symbols of the batch's source files (re-stated first: the listing may be older than an edit). */
  private async batchSymbols(pools: readonly Pool[], ids: readonly number[]): Promise<Map<number, SourceSymbol[]>> {
    const out = new Map<number, SourceSymbol[]>();
    const byPool = new Map<Pool, number[]>();
    for (const id of ids) {
      const { pool, i } = locate(pools, id);
      if (languageOf((pool.listing.files[i] as InventoryEntry).path) === undefined) continue;
      byPool.set(pool, [...(byPool.get(pool) ?? []), id]);
    }
    for (const [pool, list] of byPool) {
      const paths = list.map((id) => (pool.listing.files[id - pool.offset] as InventoryEntry).path);
      const stats = await this.inventory.restat(pool.root, paths);
      for (let n = 0; n < list.length; n++) {
        const e = stats[n];
        if (!e || e.bytes > MAX_SYMBOL_FILE_BYTES) continue;
        const key = `${pool.root}\0${e.path}`;
        let symbols = this.symbols.get(key, e);
        if (symbols === undefined) {
          const text = await this.read(pool, e, MAX_SYMBOL_FILE_BYTES);
          if (text === undefined) continue;
          symbols = sourceSymbols(e.path, text);
          this.symbols.set(key, e, symbols);
        }
        out.set(list[n] as number, symbols);
      }
    }
    return out;
  }

  /** The header, the tree (folders then their files, in path order), and the count of files not named. */
  private render(input: MapInput, entries: readonly Entry[], files: number, withSymbols: number): string {
    const lines: string[] = [this.frame(input, files, entries.length, withSymbols)];
    const sorted = [...entries].sort((a, b) => a.pool - b.pool || cmp(a.dir, b.dir) || cmp(a.base, b.base));
    let pool = -1;
    let dir: string | undefined;
    for (const e of sorted) {
      if (e.pool !== pool && input.pools.length > 1) lines.push(`[${(input.pools[e.pool] as Pool).resource}]`);
      if (e.pool !== pool || e.dir !== dir) {
        if (e.dir !== '') lines.push(`${e.dir}/`);
        pool = e.pool;
        dir = e.dir;
      }
      lines.push(`${e.dir === '' ? '' : '  '}${e.base}${e.symbols}`);
    }
    const rest = files - entries.length;
    if (rest > 0) lines.push(`… and ${rest} more file${rest === 1 ? '' : 's'}: use glob or grep to find them.`);
    return lines.join('\n');
  }

  /** What the map is and how to use it (and the instruction files not given). */
  private frame(input: MapInput, files: number, shown: number, withSymbols: number): string {
    const byPath = shown - withSymbols;
    const n = (k: number, word: string): string => `${k} ${word}${k === 1 ? '' : 's'}`;
    const parts = [
      withSymbols > 0 ? `the ${withSymbols} most relevant to this message with their top-level symbols` : '',
      byPath > 0 ? `${withSymbols > 0 ? `${byPath} more` : n(byPath, 'file')} by path` : '',
    ].filter((p) => p !== '');
    const what =
      shown === files && byPath === 0
        ? `${files === 1 ? 'its one file' : `all ${files} files`} with their top-level symbols`
        : `${n(files, 'file')}${parts.length ? `; ${parts.join(', ')}` : ''}`;
    const head = [
      `Repository map of project ${input.project} (${what}). It shows where things are, not what they say: read files with the read tool (line ranges), search their text with grep, find files with glob or list — before you rely on a file or change it.`,
    ];
    if (input.otherInstructions.length > 0)
      head.push(
        `Instruction files not given here (read the one nearest a file before you change it): ${input.otherInstructions.join(', ')}.`,
      );
    return head.join('\n');
  }
}

function done(entries: Entry[]): { entries: Entry[]; withSymbols: () => number } {
  return { entries, withSymbols: () => entries.filter((e) => e.symbols !== '').length };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `: function a, b; class C; +3 more` — kinds in order of first appearance, at most SYMBOLS_PER_FILE names. */
export function symbolText(symbols: readonly SourceSymbol[]): string {
  if (symbols.length === 0) return '';
  const byKind = new Map<SymbolKind, string[]>();
  for (const s of symbols.slice(0, SYMBOLS_PER_FILE)) byKind.set(s.kind, [...(byKind.get(s.kind) ?? []), s.name]);
  const parts = [...byKind].map(([kind, names]) => `${kind} ${names.join(', ')}`);
  const more = symbols.length - SYMBOLS_PER_FILE;
  if (more > 0) parts.push(`+${more} more`);
  return `: ${parts.join('; ')}`;
}
