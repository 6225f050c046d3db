/**
 * Ranking (DESIGN.md §4.5): every candidate file gets a score from the strategies a view names,
 * each contribution with its reason. Only files some strategy speaks for get a score entry (a
 * repository of 100k files usually has a few hundred), so ranking costs what the matches cost, not
 * what the repository's size costs; the per-listing index it looks things up in is built once per
 * listing and kept as long as the listing is (a WeakMap on the inventory's array).
 *
 * Weights: goal term in a file name 3, in a directory name 1, in the text 0.25 per occurrence (at
 * most 8); recency 2 for HEAD falling linearly to 0 at the depth read (200 commits); references 1.5
 * per best candidate naming the file (at most 3); decisions: a path named 4, a file name named 2, a
 * word of a decision in a file name 1. A term found in more than 2,000 paths is too common to
 * rank by there (it still counts in text). The order of `ranking` does not matter; a strategy not
 * listed contributes nothing.
 */
import type { Ranking } from '../../domain/context/context.ts';
import type { FileListing, GitRecency, InventoryEntry } from '../ports/file-inventory.port.ts';
import {
  dirStems,
  goalTerms,
  joinRelative,
  nameStems,
  moduleCandidates,
  namedRefs,
  occurrences,
  type NamedRef,
} from './context-terms.ts';

export const WEIGHTS = {
  goalName: 3,
  goalDir: 1,
  goalText: 0.25,
  goalTextCap: 8,
  recency: 2,
  reference: 1.5,
  referenceCap: 3,
  decisionPath: 4,
  decisionName: 2,
  decisionTerm: 1,
} as const;
/** A term in more paths than this says little about any one of them. */
export const COMMON_TERM_FILES = 2_000;
/** A file name shared by more files than this is too ambiguous to resolve a reference by. */
const AMBIGUOUS_NAME = 3;

/**
 * What ranking looks up in one listing, built lazily: a term's files on first use (a scan of the
 * lower-cased paths), the file-name table on the first reference that needs it.
 */
export interface ListingIndex {
  files: readonly InventoryEntry[];
  lower: string[] | undefined;
  terms: Map<string, { name: number[]; dirs: number[] }>;
  byBasename: Map<string, number[]> | undefined;
  /** The stems of each directory's words, as terms are looked up. */
  dirStems: Map<string, string[]> | undefined;
  /** Candidate status per glob filter key (see Pool.status). */
  filters: Map<string, Uint8Array>;
}

const INDEXES = new WeakMap<readonly InventoryEntry[], ListingIndex>();

export function listingIndex(files: readonly InventoryEntry[]): ListingIndex {
  const known = INDEXES.get(files);
  if (known) return known;
  const idx: ListingIndex = {
    files,
    lower: undefined,
    terms: new Map(),
    byBasename: undefined,
    dirStems: undefined,
    filters: new Map(),
  };
  INDEXES.set(files, idx);
  return idx;
}

/** The files whose file name (`name`) or directories (`dirs`) have a word with this stem. */
function termFiles(idx: ListingIndex, term: string): { name: number[]; dirs: number[] } {
  const known = idx.terms.get(term);
  if (known) return known;
  const lower = (idx.lower ??= idx.files.map((f) => f.path.toLowerCase()));
  const hit = { name: [] as number[], dirs: [] as number[] };
  // A stem is a prefix of a word, and a word a part of the lower-cased path: a cheap first test.
  const dirs = (idx.dirStems ??= new Map<string, string[]>());
  for (let i = 0; i < lower.length; i++) {
    if (!(lower[i] as string).includes(term)) continue;
    const path = (idx.files[i] as InventoryEntry).path;
    const slash = path.lastIndexOf('/');
    if (nameStems(path.slice(slash + 1)).includes(term)) {
      hit.name.push(i);
      continue;
    }
    if (slash < 0) continue;
    const dir = path.slice(0, slash);
    let stems = dirs.get(dir);
    if (stems === undefined) dirs.set(dir, (stems = dirStems(dir)));
    if (stems.includes(term)) hit.dirs.push(i);
  }
  if (idx.terms.size > 1_000) idx.terms.clear();
  idx.terms.set(term, hit);
  return hit;
}

/** The index of a path in the (sorted) listing. */
export function findPath(files: readonly InventoryEntry[], path: string | undefined): number | undefined {
  if (path === undefined) return undefined;
  let lo = 0;
  let hi = files.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const p = (files[mid] as InventoryEntry).path;
    if (p === path) return mid;
    if (p < path) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

function byBasename(idx: ListingIndex, base: string): number[] {
  if (idx.byBasename === undefined) {
    const m = new Map<string, number[]>();
    idx.files.forEach((f, i) => {
      const b = f.path.slice(f.path.lastIndexOf('/') + 1);
      const list = m.get(b);
      if (list) list.push(i);
      else m.set(b, [i]);
    });
    idx.byBasename = m;
  }
  return idx.byBasename.get(base) ?? [];
}

/**
 * Candidate status: 0 a candidate, 1 matches no include, 2 matches an exclude, 3 a candidate with a
 * binary extension, 4 an instruction file (given to the actor as instructions, never as a file).
 */
export const STATUS = { candidate: 0, notIncluded: 1, excluded: 2, binary: 3, instruction: 4 } as const;

/** One resource's files in an assembly. */
export interface Pool {
  resource: string;
  root: string;
  listing: FileListing;
  index: ListingIndex;
  status: Uint8Array;
  /** Global ids of this pool's files are offset + index in the listing. */
  offset: number;
  recency: GitRecency | undefined;
}

export interface Why {
  strategy: Ranking;
  score: number;
  reason: string;
}
export interface Scored {
  score: number;
  why: Why[];
}
export type Scores = Map<number, Scored>;

export function addScore(scores: Scores, id: number, strategy: Ranking, score: number, reason: string): void {
  if (score <= 0) return;
  const s = scores.get(id);
  if (s) {
    s.score += score;
    s.why.push({ strategy, score, reason });
  } else scores.set(id, { score, why: [{ strategy, score, reason }] });
}

const isCandidate = (p: Pool, i: number): boolean => p.status[i] === STATUS.candidate || p.status[i] === STATUS.binary;

/** Goal terms in paths, recency, and what the decisions name: everything that needs no file's text. */
export function scoreWithoutText(
  pools: readonly Pool[],
  ranking: readonly Ranking[],
  goal: string,
  decisions: readonly string[],
): Scores {
  const scores: Scores = new Map();
  const on = new Set(ranking);
  if (on.has('goal-match'))
    scoreTerms(scores, pools, goalTerms(goal), 'goal-match', 'goal term', WEIGHTS.goalName, WEIGHTS.goalDir);
  if (on.has('recency')) scoreRecency(scores, pools);
  if (on.has('decisions') && decisions.length > 0) {
    scoreNamedInDecisions(scores, pools, decisions);
    const terms = goalTerms(decisions.join(' '));
    scoreTerms(scores, pools, terms, 'decisions', 'decision term', WEIGHTS.decisionTerm, undefined);
  }
  return scores;
}

/** Terms in file names (weight `wName`) and, unless `wDir` is undefined, in folder names; common terms count for nothing. */
function scoreTerms(
  scores: Scores,
  pools: readonly Pool[],
  terms: readonly string[],
  strategy: Ranking,
  label: string,
  wName: number,
  wDir: number | undefined,
): void {
  for (const p of pools)
    for (const t of terms) {
      const hit = termFiles(p.index, t);
      const named = hit.name;
      const inDirs = wDir === undefined ? [] : hit.dirs;
      if (named.length + inDirs.length > COMMON_TERM_FILES) continue;
      for (const i of named)
        if (isCandidate(p, i)) addScore(scores, p.offset + i, strategy, wName, `${label} '${t}' in file name`);
      if (wDir !== undefined)
        for (const i of inDirs)
          if (isCandidate(p, i)) addScore(scores, p.offset + i, strategy, wDir, `${label} '${t}' in path`);
    }
}

/** Files changed in recent commits, the more recent the more. */
function scoreRecency(scores: Scores, pools: readonly Pool[]): void {
  for (const p of pools) {
    if (!p.recency) continue;
    const depth = Math.max(p.recency.commits, 1);
    for (const [path, n] of p.recency.paths) {
      const i = findPath(p.listing.files, path);
      if (i === undefined || !isCandidate(p, i)) continue;
      const reason =
        n === 0 ? 'changed in the last commit' : `changed ${n} commit${n === 1 ? '' : 's'} before the last`;
      addScore(scores, p.offset + i, 'recency', WEIGHTS.recency * (1 - n / Math.max(depth, 200)), reason);
    }
  }
}

/** Paths the decisions name (exactly, as a module), else files of the same name unless too many share it. */
function scoreNamedInDecisions(scores: Scores, pools: readonly Pool[], decisions: readonly string[]): void {
  for (const text of decisions) {
    for (const ref of namedRefs(text, 50)) {
      if (ref.kind === 'python') continue;
      const spec = ref.spec.replace(/^\.\//, '');
      for (const p of pools) {
        const exact = moduleCandidates(spec)
          .map((c) => findPath(p.listing.files, c))
          .find((i) => i !== undefined);
        if (exact !== undefined && isCandidate(p, exact)) {
          addScore(scores, p.offset + exact, 'decisions', WEIGHTS.decisionPath, `path '${spec}' named in a decision`);
          continue;
        }
        const base = spec.slice(spec.lastIndexOf('/') + 1);
        const same = byBasename(p.index, base);
        if (same.length <= AMBIGUOUS_NAME)
          for (const i of same)
            if (isCandidate(p, i))
              addScore(
                scores,
                p.offset + i,
                'decisions',
                WEIGHTS.decisionName,
                `file name '${base}' named in a decision`,
              );
      }
    }
  }
}

/** The text-based contributions of the best candidates: goal terms in their text, and the files they name. */
export function scoreFromText(
  scores: Scores,
  pools: readonly Pool[],
  ranking: readonly Ranking[],
  goal: string,
  texts: ReadonlyArray<{ id: number; text: string; refs: readonly NamedRef[] }>,
): void {
  const on = new Set(ranking);
  const terms = on.has('goal-match') ? goalTerms(goal) : [];
  const referrers = new Map<number, string[]>();
  for (const { id, text, refs } of texts) {
    const { pool, i } = locate(pools, id);
    const path = (pool.listing.files[i] as InventoryEntry).path;
    if (terms.length > 0) {
      const lower = text.toLowerCase();
      for (const t of terms) {
        const n = occurrences(lower, t, WEIGHTS.goalTextCap);
        if (n > 0) addScore(scores, id, 'goal-match', WEIGHTS.goalText * n, `goal term '${t}' ${n}× in text`);
      }
    }
    if (!on.has('references')) continue;
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const targets = new Set<number>();
    for (const ref of refs)
      for (const j of resolveRef(pool, dir, ref)) if (j !== i && isCandidate(pool, j)) targets.add(j);
    for (const j of targets) {
      const list = referrers.get(pool.offset + j) ?? [];
      list.push(path);
      referrers.set(pool.offset + j, list);
    }
  }
  for (const [id, from] of referrers) {
    const shown = from.slice(0, WEIGHTS.referenceCap);
    const more = from.length > shown.length ? ` and ${from.length - shown.length} more` : '';
    addScore(scores, id, 'references', WEIGHTS.reference * shown.length, `named by ${shown.join(', ')}${more}`);
  }
}

/** The listed files a reference may mean (relative imports from the file's directory; names by path, then by file name). */
function resolveRef(pool: Pool, dir: string, ref: NamedRef): number[] {
  const at = (p: string | undefined): number | undefined => findPath(pool.listing.files, p);
  if (ref.kind === 'python') {
    const base = ref.spec.replace(/\./g, '/');
    const hit = at(`${base}.py`) ?? at(`${base}/__init__.py`);
    return hit === undefined ? [] : [hit];
  }
  if (ref.spec.startsWith('./') || ref.spec.startsWith('../')) {
    const p = joinRelative(dir, ref.spec);
    if (p === undefined) return [];
    const hit = moduleCandidates(p)
      .map(at)
      .find((i) => i !== undefined);
    return hit === undefined ? [] : [hit];
  }
  if (ref.kind === 'import' && !ref.spec.includes('/') && !ref.spec.includes('.')) return []; // a package name
  const exact = at(ref.spec) ?? at(joinRelative(dir, ref.spec));
  if (exact !== undefined) return [exact];
  if (ref.kind !== 'path') return [];
  const same = byBasename(pool.index, ref.spec.slice(ref.spec.lastIndexOf('/') + 1));
  if (same.length > AMBIGUOUS_NAME) return [];
  return ref.spec.includes('/')
    ? same.filter((j) => (pool.listing.files[j] as InventoryEntry).path.endsWith(`/${ref.spec}`))
    : same;
}

export function locate(pools: readonly Pool[], id: number): { pool: Pool; i: number } {
  for (let k = pools.length - 1; k >= 0; k--) {
    const pool = pools[k] as Pool;
    if (id >= pool.offset) return { pool, i: id - pool.offset };
  }
  throw new Error(`no pool holds file id ${id}`);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Every candidate in rank order: those with a score (score desc, path asc, resource asc), then the
 * rest in path order across resources. Lazy: a caller that stops early pays for what it took.
 */
export function* rankOrder(pools: readonly Pool[], scores: Scores): Generator<number> {
  const pathOf = (id: number): string => {
    const { pool, i } = locate(pools, id);
    return (pool.listing.files[i] as InventoryEntry).path;
  };
  const scored = [...scores.entries()]
    .map(([id, s]) => ({ id, score: Math.round(s.score * 1000) / 1000, path: pathOf(id) }))
    .sort((a, b) => b.score - a.score || cmp(a.path, b.path) || a.id - b.id);
  for (const s of scored) yield s.id;
  const heads = pools.map(() => 0);
  for (;;) {
    let best = -1;
    let bestPath = '';
    for (let k = 0; k < pools.length; k++) {
      const pool = pools[k] as Pool;
      let i = heads[k] as number;
      while (i < pool.status.length && (!isCandidate(pool, i) || scores.has(pool.offset + i))) i++;
      heads[k] = i;
      if (i >= pool.status.length) continue;
      const p = (pool.listing.files[i] as InventoryEntry).path;
      if (best === -1 || cmp(p, bestPath) < 0) {
        best = k;
        bestPath = p;
      }
    }
    if (best === -1) return;
    const pool = pools[best] as Pool;
    yield pool.offset + (heads[best] as number);
    heads[best] = (heads[best] as number) + 1;
  }
}
