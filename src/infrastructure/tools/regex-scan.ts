/**
 * The part of builtin/grep, builtin/search-files and builtin/replace-in-files that runs a regular
 * expression someone else wrote: reading the files and matching them. It runs in a worker thread
 * (regex-worker.ts), never on the agent's event loop, because a backtracking pattern can take
 * minutes on one line and Node's RegExp cannot be interrupted. Paths arrive resolved and confined
 * by the caller; nothing here writes.
 */
import { lstat, readFile, stat } from 'node:fs/promises';
import { replacedLength } from './replacement-length.ts';
import { isBinary, MAX_FILE_BYTES } from './tool-support.ts';

const MAX_LINE_SHOWN = 500;
/**
 * replace-in-files' limits, in characters (up to two bytes each), inside the worker's 256 MB heap:
 * one replaced file, and every changed file before and after together (all are held until the
 * first write, so that a stopped call writes nothing).
 */
const MAX_REPLACED_CHARS = 16 * 1024 * 1024;
const MAX_CHANGED_CHARS = 48 * 1024 * 1024;

const mb = (chars: number): string => String(Math.round((chars / 1024 / 1024) * 10) / 10);

/** A job that cannot be done as asked: its message is the call's answer. */
export class ScanRefusal extends Error {
  override readonly name = 'ScanRefusal';
}

/** A file to match: its absolute path and the name it is shown by. */
export interface ScanFile {
  abs: string;
  rel: string;
}

export interface GrepJob {
  kind: 'grep';
  source: string;
  flags: string;
  mode: 'content' | 'files' | 'count';
  context: number;
  max: number;
  files: ScanFile[];
}
export interface GrepScan {
  out: string[];
  matches: number;
  shownMatches: number;
  filesHit: number;
}

export interface SearchJob {
  kind: 'search';
  source: string;
  maxResults: number;
  files: ScanFile[];
}
export interface SearchScan {
  hits: string[];
  filesHit: number;
  /** The results reached maxResults with more to come. */
  capped: boolean;
}

export interface ReplaceJob {
  kind: 'replace';
  source: string;
  flags: string;
  replacement: string;
  files: ScanFile[];
}
export interface ReplaceScan {
  /** The files the replacement changes, with their text before and after, nothing written yet. */
  changes: Array<{ rel: string; before: string; after: string; count: number }>;
}

export type ScanJob = GrepJob | SearchJob | ReplaceJob;
export type ScanResult = GrepScan | SearchScan | ReplaceScan;

/** Runs a job; `at(i)` is told before file i is read, so a watchdog knows which file a slow match is on. */
export function scan(job: GrepJob, at: (i: number) => void): Promise<GrepScan>;
export function scan(job: SearchJob, at: (i: number) => void): Promise<SearchScan>;
export function scan(job: ReplaceJob, at: (i: number) => void): Promise<ReplaceScan>;
export function scan(job: ScanJob, at: (i: number) => void): Promise<ScanResult>;
export function scan(job: ScanJob, at: (i: number) => void): Promise<ScanResult> {
  if (job.kind === 'grep') return grepScan(job, at);
  if (job.kind === 'search') return searchScan(job, at);
  return replaceScan(job, at);
}

async function grepScan(job: GrepJob, at: (i: number) => void): Promise<GrepScan> {
  const re = new RegExp(job.source, job.flags);
  const { mode, max, context } = job;
  const out: string[] = [];
  let matches = 0;
  let shownMatches = 0;
  let filesHit = 0;
  for (const [n, f] of job.files.entries()) {
    at(n);
    const text = await textIfSmall(f.abs);
    if (text === undefined) continue;
    const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
    // A final line feed ends the last line; it does not start an empty one.
    if (lines[lines.length - 1] === '') lines.pop();
    const hits: number[] = [];
    for (let i = 0; i < lines.length; i++) if (re.test(lines[i] as string)) hits.push(i);
    if (hits.length === 0) continue;
    filesHit++;
    matches += hits.length;
    if (mode === 'files') {
      if (filesHit <= max) out.push(f.rel);
    } else if (mode === 'count') {
      if (filesHit <= max) out.push(`${f.rel}:${hits.length}`);
    } else if (shownMatches < max) {
      const room = hits.slice(0, max - shownMatches);
      shownMatches += room.length;
      out.push(...withContext(f.rel, lines, room, context, out.length > 0));
    }
  }
  return { out, matches, shownMatches, filesHit };
}

/** `path:12:text` for a match, `path-11-text` around it, `--` between separate groups (as grep prints). */
function withContext(
  rel: string,
  lines: readonly string[],
  hits: readonly number[],
  context: number,
  sep: boolean,
): string[] {
  const out: string[] = [];
  const isHit = new Set(hits);
  let printedTo = -1;
  for (const h of hits) {
    const from = Math.max(0, h - context, printedTo + 1);
    const to = Math.min(lines.length - 1, h + context);
    // Like grep: `--` between groups that are not adjacent, a file's first group included.
    if (context > 0 && (printedTo < 0 ? sep : from > printedTo + 1)) out.push('--');
    for (let i = from; i <= to; i++) {
      const line = lines[i] as string;
      const shown = line.length > MAX_LINE_SHOWN ? `${line.slice(0, MAX_LINE_SHOWN)}… [line cut]` : line;
      out.push(`${rel}${isHit.has(i) ? ':' : '-'}${i + 1}${isHit.has(i) ? ':' : '-'}${shown}`);
    }
    printedTo = Math.max(printedTo, to);
  }
  return out;
}

async function searchScan(job: SearchJob, at: (i: number) => void): Promise<SearchScan> {
  const re = new RegExp(job.source);
  const hits: string[] = [];
  const filesHit = new Set<string>();
  let capped = false;
  for (const [n, f] of job.files.entries()) {
    at(n);
    const text = await textFile(f.abs);
    if (text === undefined) continue;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] ?? '').replace(/\r$/, '');
      if (!re.test(line)) continue;
      if (hits.length >= job.maxResults) {
        capped = true;
        break;
      }
      filesHit.add(f.rel);
      hits.push(`${f.rel}:${i + 1}: ${line.length > MAX_LINE_SHOWN ? `${line.slice(0, MAX_LINE_SHOWN)}…` : line}`);
    }
    if (capped) break;
  }
  return { hits, filesHit: filesHit.size, capped };
}

async function replaceScan(job: ReplaceJob, at: (i: number) => void): Promise<ReplaceScan> {
  const re = new RegExp(job.source, job.flags);
  const changes: ReplaceScan['changes'] = [];
  let held = 0;
  for (const [n, f] of job.files.entries()) {
    at(n);
    const text = await textFile(f.abs);
    if (text === undefined) continue;
    // Measured before it is built: see replacement-length.ts.
    const { count, length } = replacedLength(text, re, job.replacement);
    if (count === 0) continue;
    if (length > MAX_REPLACED_CHARS)
      throw new ScanRefusal(
        `the replacement would make ${f.rel} ${mb(length)} MB; a replaced file may be at most ${mb(MAX_REPLACED_CHARS)} MB`,
      );
    const after = text.replace(re, job.replacement);
    if (after === text) continue;
    held += text.length + after.length;
    if (held > MAX_CHANGED_CHARS)
      throw new ScanRefusal(
        `the replacement changes more than ${mb(MAX_CHANGED_CHARS)} MB of text (at ${f.rel}); narrow include and replace in parts`,
      );
    changes.push({ rel: f.rel, before: text, after, count });
  }
  return { changes };
}

/** grep's reading: a regular file's text, or undefined for symlinks, files over MAX_FILE_BYTES and binary files. */
async function textIfSmall(abs: string): Promise<string | undefined> {
  const st = await lstat(abs).catch(() => undefined);
  if (!st?.isFile() || st.size > MAX_FILE_BYTES) return undefined;
  const buf = await readFile(abs).catch(() => undefined);
  return buf && !isBinary(buf) ? buf.toString('utf8') : undefined;
}

/** search-files' and replace-in-files' reading: undefined for files over MAX_FILE_BYTES and binary files. */
async function textFile(abs: string): Promise<string | undefined> {
  const st = await stat(abs);
  if (st.size > MAX_FILE_BYTES) return undefined;
  const buf = await readFile(abs);
  return isBinary(buf) ? undefined : buf.toString('utf8');
}
