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
import type { EffectiveContextSettings } from '../../domain/context/context.ts';
import type { FileInventory, InventoryEntry } from '../ports/file-inventory.port.ts';
import type { TokenCounter } from '../ports/language-model.port.ts';
import { estimateTokens, Fill, type FillOutcome } from './context-fill.ts';
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

/** The best candidates whose text is read for ranking (goal terms in text, references). */
export const TEXT_WINDOW = 64;
const BATCH = 128;

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

export type AssemblyOutcome = FillOutcome;

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
    const fresh = new Map<number, InventoryEntry | undefined>();
    const scores = await this.rank(a, fresh);
    const fill = new Fill(a.pools, a.settings, scores, a.available);
    const order = rankOrder(a.pools, scores);
    while (fill.stop === undefined) {
      const batch = nextBatch(order);
      if (batch.length === 0) break;
      for (const id of batch) fill.decided.add(id);
      if (!a.dryRun) await this.restat(a.pools, batch, fresh);
      a.signal?.throwIfAborted();
      for (const id of batch) await this.consider(a, fill, id, a.dryRun ? fill.listed(id) : fresh.get(id));
    }
    fill.cutUnreached(order);
    return fill.outcome(a.wantText);
  }

  /** One candidate against the limits, in the order the header gives; `entry` is undefined when it is gone. */
  private async consider(a: AssemblyInput, fill: Fill, id: number, entry: InventoryEntry | undefined): Promise<void> {
    const s = a.settings;
    const { pool, i } = locate(a.pools, id);
    if (fill.stop !== undefined) return fill.cutRest(id, entry ?? fill.listed(id), fill.stop);
    if (pool.status[i] === STATUS.binary) return fill.cutFile(id, 'binary', entry ?? fill.listed(id));
    if (entry === undefined) return fill.cutFile(id, 'unreadable', fill.listed(id));
    if (entry.bytes > s.maxFileSize) return fill.cutFile(id, 'max-file-size', entry);
    if (fill.included.length >= s.maxFiles) {
      fill.stop = 'max-files';
      return fill.cutRest(id, entry, fill.stop);
    }
    if (fill.total + entry.bytes > s.maxTotalSize) return fill.cutFile(id, (fill.lastLimit = 'max-total-size'), entry);
    if (a.dryRun) return fill.take(id, entry, undefined, estimateTokens(entry.bytes));
    fill.reads++;
    const content = await this.content(pool, entry, s.maxFileSize);
    if (content.kind !== 'text') {
      const reason = content.kind === 'too-large' ? 'max-file-size' : content.kind;
      return fill.cutFile(id, reason, { ...entry, bytes: content.bytes });
    }
    fill.take(id, entry, content, (content.tokens ??= await this.tokens.count(content.text)));
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
}

/** The next candidates in rank order, re-stated and decided together. */
function nextBatch(order: Iterator<number>): number[] {
  const batch: number[] = [];
  while (batch.length < BATCH) {
    const r = order.next();
    if (r.done) break;
    batch.push(r.value);
  }
  return batch;
}
