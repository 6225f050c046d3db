/** What one measure of `npm run health` found. */

/** One place a measure counts. */
export interface Finding {
  /** Path relative to the root. */
  readonly file: string;
  /** 1-based; absent when the finding is the whole file. */
  readonly line?: number;
  /** What is there: a function's name, the assigned field, the cast's text… */
  readonly what: string;
  /** Lines, for measures of size. */
  readonly lines?: number;
}

export interface Measure {
  /** Stable key for `--format json` and for comparing runs. */
  readonly id: string;
  /** The row's label in the table. */
  readonly title: string;
  readonly count: number;
  /** What the count is out of, where that says something (17 of 31 files). */
  readonly outOf?: number;
  /** A word on the count (how many of them are polls…), printed beside it. */
  readonly note?: string;
  readonly findings: readonly Finding[];
  /** The id of a measure whose list already holds these findings (the text output lists them once). */
  readonly listedWith?: string;
}

/** `file:line`, or `file` for a finding about a whole file. */
export function where(f: Finding): string {
  return f.line === undefined ? f.file : `${f.file}:${f.line}`;
}

/** Findings in file order, then line order: the order a reader walks the tree in. */
export function byPlace(a: Finding, b: Finding): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0);
}
