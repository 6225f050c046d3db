/**
 * One assembly's running account (see context-assembly.ts for the order of the checks): the files
 * included so far and their bytes and tokens, what was cut and by which limit, and the limit that
 * stopped the fill. The Assembler decides each candidate; this keeps the books and writes the outcome.
 */
import { createHash } from 'node:crypto';
import type { EffectiveContextSettings } from '../../domain/context/context.ts';
import type { InventoryEntry } from '../ports/file-inventory.port.ts';
import { locate, STATUS, type Pool, type Scores } from './context-ranking.ts';
import type { ContextInspection, ExclusionReason, RankedFile } from './context.types.ts';

/** Bytes per token when a file is not read (simulate, and files cut before reading). */
export const BYTES_PER_TOKEN = 4;
/** Cut files listed after the included ones. */
export const CUT_LISTED = 200;
/** Files read past maxFiles before the fill gives up on finding more that fit. */
const READ_SLACK = 200;

export const estimateTokens = (bytes: number): number => Math.ceil(bytes / BYTES_PER_TOKEN);

/** What the fill keeps of a file it read: its text, and its digest once computed (kept on the cached content). */
export interface ReadText {
  text: string;
  hash?: string | undefined;
}

interface Included {
  id: number;
  entry: InventoryEntry;
  content: ReadText | undefined;
  tokens: number;
}

export type FillOutcome = Pick<ContextInspection, 'files' | 'cut' | 'totals' | 'snapshot'> & {
  fragments: Array<{ resource: string; path: string; tokens: number; text: string }>;
};

export class Fill {
  readonly cut: Partial<Record<ExclusionReason, number>> = {};
  readonly included: Included[] = [];
  /** The files taken from the rank order so far, whatever became of them. */
  readonly decided = new Set<number>();
  total = 0;
  used = 0;
  reads = 0;
  stop: ExclusionReason | undefined;
  /** The limit that last cut a file, which stops the fill once too many files were read. */
  lastLimit: ExclusionReason = 'token-budget';
  private readonly listedCut: RankedFile[] = [];
  private readonly pools: readonly Pool[];
  private readonly settings: EffectiveContextSettings;
  private readonly scores: Scores;
  private readonly available: number;

  constructor(pools: readonly Pool[], settings: EffectiveContextSettings, scores: Scores, available: number) {
    this.pools = pools;
    this.settings = settings;
    this.scores = scores;
    this.available = available;
    if (available <= 0) this.stop = 'token-budget';
    // Files that never were candidates are counted first, so the cut record lists them first.
    for (const p of pools)
      for (let i = 0; i < p.status.length; i++) {
        const st = p.status[i];
        if (st === STATUS.notIncluded) this.count('not-included');
        else if (st === STATUS.excluded) this.count('excluded-glob');
      }
  }

  /** The file as the listing saw it (before any re-stat). */
  listed(id: number): InventoryEntry {
    const { pool, i } = locate(this.pools, id);
    return pool.listing.files[i] as InventoryEntry;
  }

  cutFile(id: number, reason: ExclusionReason, entry: InventoryEntry, tokens?: number): void {
    this.count(reason);
    if (this.listedCut.length < CUT_LISTED)
      this.listedCut.push(ranked(this.pools, this.scores, id, entry, tokens, reason));
  }

  /** Cuts a file the fill no longer considers: by its own reason (binary, too large) or by the limit. */
  cutRest(id: number, entry: InventoryEntry, stop: ExclusionReason): void {
    this.cutFile(id, this.ownReason(id, entry.bytes) ?? stop, entry);
  }

  /** Includes a measured file if its tokens fit, else cuts it; then stops if a limit is now full. */
  take(id: number, entry: InventoryEntry, content: ReadText | undefined, tokens: number): void {
    const s = this.settings;
    if (this.used + tokens > this.available) {
      this.cutFile(id, (this.lastLimit = 'token-budget'), entry, tokens);
    } else {
      this.included.push({ id, entry, content, tokens });
      this.used += tokens;
      this.total += entry.bytes;
    }
    if (this.included.length >= s.maxFiles) this.stop = 'max-files';
    else if (this.total >= s.maxTotalSize) this.stop = 'max-total-size';
    else if (this.used >= this.available) this.stop = 'token-budget';
    else if (this.reads >= s.maxFiles + READ_SLACK) this.stop = this.lastLimit;
  }

  /**
   * What the fill did not reach is cut by the limit that stopped it (or its own reason): the first
   * ones listed in rank order, the others only counted.
   */
  cutUnreached(order: Iterator<number>): void {
    const rest = this.stop ?? 'max-files';
    while (this.listedCut.length < CUT_LISTED) {
      const r = order.next();
      if (r.done) break;
      this.decided.add(r.value);
      this.cutRest(r.value, this.listed(r.value), rest);
    }
    for (const p of this.pools)
      for (let i = 0; i < p.status.length; i++) {
        const st = p.status[i];
        if ((st !== STATUS.candidate && st !== STATUS.binary) || this.decided.has(p.offset + i)) continue;
        this.count(this.ownReason(p.offset + i, (p.listing.files[i] as InventoryEntry).bytes) ?? rest);
      }
  }

  outcome(wantText: boolean): FillOutcome {
    const files = this.included.map((f) => ranked(this.pools, this.scores, f.id, f.entry, f.tokens));
    const fragments = wantText
      ? this.included.map((f, k) => ({
          ...pick(files[k] as RankedFile),
          tokens: f.tokens,
          text: f.content?.text ?? '',
        }))
      : [];
    const excluded = Object.values(this.cut).reduce((x, y) => x + y, 0);
    return {
      files: [...files, ...this.listedCut],
      cut: this.cut,
      totals: { included: this.included.length, includedTokens: this.used, includedBytes: this.total, excluded },
      snapshot: snapshotOf(
        this.included.map((f, k) => {
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

  private count(reason: ExclusionReason): void {
    this.cut[reason] = (this.cut[reason] ?? 0) + 1;
  }

  /** Binary, or over the file size limit: a reason that cuts the file whatever limit stopped the fill. */
  private ownReason(id: number, bytes: number): ExclusionReason | undefined {
    const { pool, i } = locate(this.pools, id);
    return pool.status[i] === STATUS.binary
      ? 'binary'
      : bytes > this.settings.maxFileSize
        ? 'max-file-size'
        : undefined;
  }
}

function ranked(
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
