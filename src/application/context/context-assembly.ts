/**
 * Filling the context: candidates in rank order, each checked against the limits in a fixed order
 * (binary, max-file-size, max-files, max-total-size, then — after reading — binary by content,
 * unreadable, token-budget). A file that does not fit is skipped and the next one tried, so a
 * smaller file may still fit; once a limit is full (file count, bytes, tokens), or after
 * maxFiles + 200 files were read, every file not yet decided is cut by it without being read
 * (binary-by-extension and oversized ones by those reasons). Only what may be included is read
 * and tokenized.
 *
 * `simulate` reads nothing: sizes come from the listing, binary is told by extension, tokens are
 * estimated at 4 bytes per token (o200k on English text and code is 3.5–4.5), and text-based
 * ranking (goal terms in text, references) is skipped.
 */
import { createHash } from 'node:crypto';
import type { EffectiveContextSettings } from '../../domain/context/context.ts';
import type { FileInventory, InventoryEntry } from '../ports/file-inventory.port.ts';
import type { TokenCounter } from '../ports/language-model.port.ts';
import { namedRefs, type NamedRef } from './context-terms.ts';
import {
  locate,
  rankOrder,
  scoreFromText,
  scoreWithoutText,
  STATUS,
  type Pool,
  type Scores,
} from './context-ranking.ts';
import type { ContextInspection, ExclusionReason, RankedFile } from './context.types.ts';

/** Bytes per token when a file is not read (simulate, and files cut before reading). */
export const BYTES_PER_TOKEN = 4;
/** The best candidates whose text is read for ranking (goal terms in text, references). */
export const TEXT_WINDOW = 64;
/** Cut files listed after the included ones. */
export const CUT_LISTED = 200;
const READ_SLACK = 200;
const BATCH = 128;

export const estimateTokens = (bytes: number): number => Math.ceil(bytes / BYTES_PER_TOKEN);

interface Content {
  bytes: number;
  mtimeMs: number;
  kind: 'text' | 'binary' | 'unreadable' | 'too-large';
  text: string;
  tokens?: number | undefined;
  hash?: string | undefined;
  refs?: NamedRef[] | undefined;
}

/** Texts and token counts by (root, path, size, mtimeMs), least recently used evicted past `maxChars`. */
export class ContentCache {
  private readonly map = new Map<string, Content>();
  private chars = 0;
  private readonly maxChars: number;

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  get(key: string, e: InventoryEntry): Content | undefined {
    const c = this.map.get(key);
    if (!c || c.bytes !== e.bytes || c.mtimeMs !== e.mtimeMs) return undefined;
    this.map.delete(key);
    this.map.set(key, c);
    return c;
  }

  set(key: string, c: Content): void {
    const old = this.map.get(key);
    if (old) this.chars -= old.text.length;
    this.map.delete(key);
    this.map.set(key, c);
    this.chars += c.text.length;
    for (const [k, v] of this.map) {
      if (this.chars <= this.maxChars || this.map.size <= 1) break;
      this.map.delete(k);
      this.chars -= v.text.length;
    }
  }
}

export interface AssemblyInput {
  pools: Pool[];
  settings: EffectiveContextSettings;
  goal: string;
  decisions: readonly string[];
  available: number;
  dryRun: boolean;
  wantText: boolean;
  signal?: AbortSignal | undefined;
}

export type RankInput = Pick<AssemblyInput, 'pools' | 'settings' | 'goal' | 'decisions' | 'dryRun' | 'signal'>;

export type AssemblyOutcome = Pick<ContextInspection, 'files' | 'cut' | 'totals' | 'snapshot'> & {
  fragments: Array<{ resource: string; path: string; tokens: number; text: string }>;
};

export class Assembler {
  private readonly inventory: FileInventory;
  private readonly tokens: TokenCounter;
  private readonly cache: ContentCache;

  constructor(inventory: FileInventory, tokens: TokenCounter, cache: ContentCache) {
    this.inventory = inventory;
    this.tokens = tokens;
    this.cache = cache;
  }

  async assemble(a: AssemblyInput): Promise<AssemblyOutcome> {
    const { pools, settings: s } = a;
    const fresh = new Map<number, InventoryEntry | undefined>();
    const scores = await this.rank(a, fresh);

    const cut: Partial<Record<ExclusionReason, number>> = {};
    const cutFile = (id: number, reason: ExclusionReason, entry: InventoryEntry, tokens?: number): void => {
      cut[reason] = (cut[reason] ?? 0) + 1;
      if (listedCut.length < CUT_LISTED) listedCut.push(this.ranked(pools, scores, id, entry, tokens, reason));
    };
    for (const p of pools)
      for (let i = 0; i < p.status.length; i++) {
        const st = p.status[i];
        if (st === STATUS.notIncluded) cut['not-included'] = (cut['not-included'] ?? 0) + 1;
        else if (st === STATUS.excluded) cut['excluded-glob'] = (cut['excluded-glob'] ?? 0) + 1;
      }
    const included: Array<{ id: number; entry: InventoryEntry; content: Content | undefined; tokens: number }> = [];
    const listedCut: RankedFile[] = [];
    let total = 0;
    let used = 0;
    let reads = 0;
    let stop: ExclusionReason | undefined = a.available <= 0 ? 'token-budget' : undefined;
    let lastLimit: ExclusionReason = 'token-budget';
    const order = rankOrder(pools, scores);
    const decided = new Set<number>();
    const listed = (id: number): InventoryEntry => {
      const { pool, i } = locate(pools, id);
      return pool.listing.files[i] as InventoryEntry;
    };

    while (stop === undefined) {
      const batch: number[] = [];
      while (batch.length < BATCH) {
        const r = order.next();
        if (r.done) break;
        batch.push(r.value);
      }
      if (batch.length === 0) break;
      for (const id of batch) decided.add(id);
      if (!a.dryRun) await this.restat(pools, batch, fresh);
      a.signal?.throwIfAborted();
      for (let b = 0; b < batch.length; b++) {
        const id = batch[b] as number;
        const { pool, i } = locate(pools, id);
        const entry = a.dryRun ? listed(id) : fresh.get(id);
        if (stop !== undefined) {
          this.cutRest(pools, id, entry ?? listed(id), s, stop, cutFile);
          continue;
        }
        if (pool.status[i] === STATUS.binary) {
          cutFile(id, 'binary', entry ?? listed(id));
          continue;
        }
        if (entry === undefined) {
          cutFile(id, 'unreadable', listed(id));
          continue;
        }
        if (entry.bytes > s.maxFileSize) {
          cutFile(id, 'max-file-size', entry);
          continue;
        }
        if (included.length >= s.maxFiles) {
          stop = 'max-files';
          this.cutRest(pools, id, entry, s, stop, cutFile);
          continue;
        }
        if (total + entry.bytes > s.maxTotalSize) {
          cutFile(id, (lastLimit = 'max-total-size'), entry);
          continue;
        }
        let tokens: number;
        let content: Content | undefined;
        if (a.dryRun) tokens = estimateTokens(entry.bytes);
        else {
          reads++;
          content = await this.content(pool, entry, s.maxFileSize);
          if (content.kind !== 'text') {
            const reason = content.kind === 'too-large' ? 'max-file-size' : content.kind;
            cutFile(id, reason, { ...entry, bytes: content.bytes });
            continue;
          }
          tokens = content.tokens ??= await this.tokens.count(content.text);
        }
        if (used + tokens > a.available) {
          cutFile(id, (lastLimit = 'token-budget'), entry, tokens);
        } else {
          included.push({ id, entry, content, tokens });
          used += tokens;
          total += entry.bytes;
        }
        if (included.length >= s.maxFiles) stop = 'max-files';
        else if (total >= s.maxTotalSize) stop = 'max-total-size';
        else if (used >= a.available) stop = 'token-budget';
        else if (reads >= s.maxFiles + READ_SLACK) stop = lastLimit;
      }
    }
    // What the loop did not reach is cut by the limit that stopped it (or its own reason): the
    // first ones listed in rank order, the others only counted.
    const rest = stop ?? 'max-files';
    while (listedCut.length < CUT_LISTED) {
      const r = order.next();
      if (r.done) break;
      decided.add(r.value);
      this.cutRest(pools, r.value, listed(r.value), s, rest, cutFile);
    }
    for (const p of pools)
      for (let i = 0; i < p.status.length; i++) {
        const st = p.status[i];
        if ((st !== STATUS.candidate && st !== STATUS.binary) || decided.has(p.offset + i)) continue;
        const reason =
          st === STATUS.binary
            ? 'binary'
            : (p.listing.files[i] as InventoryEntry).bytes > s.maxFileSize
              ? 'max-file-size'
              : rest;
        cut[reason] = (cut[reason] ?? 0) + 1;
      }

    const files = included.map((f) => this.ranked(pools, scores, f.id, f.entry, f.tokens));
    const fragments = a.wantText
      ? included.map((f, k) => ({ ...pick(files[k] as RankedFile), tokens: f.tokens, text: f.content?.text ?? '' }))
      : [];
    const excluded = Object.values(cut).reduce((x, y) => x + y, 0);
    return {
      files: [...files, ...listedCut],
      cut,
      totals: { included: included.length, includedTokens: used, includedBytes: total, excluded },
      snapshot: snapshotOf(
        included.map((f, k) => {
          const { resource, path } = pick(files[k] as RankedFile);
          const c = f.content;
          const digest = c
            ? (c.hash ??= createHash('sha256').update(c.text).digest('hex'))
            : `${f.entry.bytes}:${f.entry.mtimeMs}`;
          return { resource, path, digest };
        }),
      ),
      fragments,
    };
  }

  /**
   * The candidates' scores: what needs no text (paths, history, decisions), then — unless a dry
   * run — what the best candidates' text adds. `fresh` keeps the files re-stated on the way.
   */
  async rank(a: RankInput, fresh = new Map<number, InventoryEntry | undefined>()): Promise<Scores> {
    const scores = scoreWithoutText(a.pools, a.settings.ranking, a.goal, a.decisions);
    if (!a.dryRun && (a.settings.ranking.includes('goal-match') || a.settings.ranking.includes('references')))
      await this.rankByText(a, scores, fresh);
    a.signal?.throwIfAborted();
    return scores;
  }

  /** Reads the best candidates' text: goal terms in it, and the files it names, add to their scores. */
  private async rankByText(
    a: RankInput,
    scores: Scores,
    fresh: Map<number, InventoryEntry | undefined>,
  ): Promise<void> {
    const window: number[] = [];
    for (const id of rankOrder(a.pools, scores)) {
      const { pool, i } = locate(a.pools, id);
      const e = pool.listing.files[i] as InventoryEntry;
      if (pool.status[i] === STATUS.candidate && e.bytes <= a.settings.maxFileSize) window.push(id);
      if (window.length >= TEXT_WINDOW) break;
    }
    await this.restat(a.pools, window, fresh);
    const texts: Array<{ id: number; text: string; refs: NamedRef[] }> = [];
    for (const id of window) {
      const entry = fresh.get(id);
      if (!entry) continue;
      const c = await this.content(locate(a.pools, id).pool, entry, a.settings.maxFileSize);
      if (c.kind === 'text') texts.push({ id, text: c.text, refs: (c.refs ??= namedRefs(c.text)) });
    }
    scoreFromText(scores, a.pools, a.settings.ranking, a.goal, texts);
  }

  private async restat(
    pools: readonly Pool[],
    ids: readonly number[],
    fresh: Map<number, InventoryEntry | undefined>,
  ): Promise<void> {
    const byPool = new Map<Pool, number[]>();
    for (const id of ids) {
      if (fresh.has(id)) continue;
      const { pool } = locate(pools, id);
      const list = byPool.get(pool) ?? [];
      list.push(id);
      byPool.set(pool, list);
    }
    for (const [pool, list] of byPool) {
      const paths = list.map((id) => (pool.listing.files[id - pool.offset] as InventoryEntry).path);
      const stats = await this.inventory.restat(pool.root, paths);
      list.forEach((id, k) => fresh.set(id, stats[k]));
    }
  }

  /** A file's text as the assembly reads it (cached by size and mtime); undefined when it is not text or too large. */
  async text(pool: Pool, entry: InventoryEntry, maxFileSize: number): Promise<string | undefined> {
    const c = await this.content(pool, entry, maxFileSize);
    return c.kind === 'text' ? c.text : undefined;
  }

  private async content(pool: Pool, entry: InventoryEntry, maxFileSize: number): Promise<Content> {
    const key = `${pool.root}\0${entry.path}`;
    const known = this.cache.get(key, entry);
    if (known) return known;
    const r = await this.inventory.read(pool.root, entry.path, maxFileSize);
    const c: Content =
      r.kind === 'text'
        ? {
            bytes: r.bytes,
            mtimeMs: r.mtimeMs,
            kind: r.truncated ? 'too-large' : 'text',
            text: r.truncated ? '' : r.text,
          }
        : r.kind === 'binary'
          ? { bytes: r.bytes, mtimeMs: r.mtimeMs, kind: 'binary', text: '' }
          : { bytes: entry.bytes, mtimeMs: entry.mtimeMs, kind: 'unreadable', text: '' };
    if (r.kind !== 'unreadable') this.cache.set(key, c);
    return c;
  }

  private cutRest(
    pools: readonly Pool[],
    id: number,
    entry: InventoryEntry,
    s: EffectiveContextSettings,
    stop: ExclusionReason,
    cutFile: (id: number, reason: ExclusionReason, entry: InventoryEntry) => void,
  ): void {
    const { pool, i } = locate(pools, id);
    cutFile(
      id,
      pool.status[i] === STATUS.binary ? 'binary' : entry.bytes > s.maxFileSize ? 'max-file-size' : stop,
      entry,
    );
  }

  private ranked(
    pools: readonly Pool[],
    scores: Scores,
    id: number,
    entry: InventoryEntry,
    tokens: number | undefined,
    excludedBy?: ExclusionReason,
  ): RankedFile {
    const { pool } = locate(pools, id);
    const s = scores.get(id);
    return {
      resource: pool.resource,
      path: entry.path,
      bytes: entry.bytes,
      tokens: tokens ?? estimateTokens(entry.bytes),
      score: round(s?.score ?? 0),
      why: (s?.why ?? []).map((w) => ({ ...w, score: round(w.score) })),
      included: excludedBy === undefined,
      ...(excludedBy !== undefined ? { excludedBy } : {}),
    };
  }
}

const round = (n: number): number => Math.round(n * 1000) / 1000;
const pick = (f: RankedFile): { resource: string; path: string } => ({ resource: f.resource, path: f.path });

/** A hash of the included files: resource, path and content digest of each, in (resource, path) order. */
function snapshotOf(items: Array<{ resource: string; path: string; digest: string }>): string {
  const h = createHash('sha256');
  const sorted = [...items].sort((x, y) =>
    x.resource !== y.resource ? (x.resource < y.resource ? -1 : 1) : x.path < y.path ? -1 : x.path > y.path ? 1 : 0,
  );
  for (const it of sorted) h.update(`${it.resource}\0${it.path}\0${it.digest}\n`);
  return `sha256:${h.digest('hex')}`;
}
