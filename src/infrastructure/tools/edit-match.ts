/**
 * What builtin/edit does to a text, without touching a file: exact replacements applied in order,
 * all or none, in the file's own line endings; and, when an oldText is not there, the region of
 * the file that comes closest, so the model can copy the real text and retry.
 */
import { numbered } from './read-tool.ts';

export interface TextEdit {
  oldText: string;
  newText: string;
  replaceAll?: boolean | undefined;
}

export type EditOutcome =
  | { ok: true; text: string; replacements: number }
  /** `problem`: one line; `detail`: what helps a retry (the closest region, the lines of each match). */
  | { ok: false; problem: string; detail: string };

/** How many of the file's lines an answer shows at most (of the closest region, or of matches' line numbers). */
const MAX_SHOWN = 40;

/**
 * `edits` applied to `original` one after the other, each to the result of the one before. A CRLF
 * file is matched as LF (oldText may be given with either) and written back with CRLF; a leading
 * byte-order mark stays. `rel` names the file in the answers.
 */
export function applyEdits(original: string, edits: readonly TextEdit[], rel: string): EditOutcome {
  const bom = original.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = original.slice(bom.length);
  // Only a file whose every line feed is CRLF is treated as CRLF: a mixed file is matched as it is.
  const crlf = body.includes('\r\n') && !/(^|[^\r])\n/.test(body);
  const lf = (s: string): string => (crlf ? s.replace(/\r\n/g, '\n') : s);
  let text = lf(body);
  let replacements = 0;
  for (const [i, e] of edits.entries()) {
    const which = edits.length === 1 ? 'the edit' : `edit ${i + 1} of ${edits.length}`;
    const earlier = i > 0 ? ' (the file as the earlier edits of this call left it)' : '';
    const oldText = lf(e.oldText);
    const newText = lf(e.newText);
    if (oldText === '') return fail(`${which}: oldText is empty`, '');
    if (oldText === newText) return fail(`${which}: oldText and newText are the same, so it changes nothing`, '');
    const at = occurrences(text, oldText);
    if (at.length === 0)
      return fail(`${which}: oldText does not occur in ${rel}${earlier}`, closestAnswer(text, oldText, rel));
    if (at.length > 1 && !e.replaceAll) {
      const lines = at.slice(0, MAX_SHOWN).map((k) => lineOf(text, k));
      const more = at.length > lines.length ? `, and ${at.length - lines.length} more` : '';
      return fail(
        `${which}: oldText occurs ${at.length} times in ${rel}${earlier}, at lines ${lines.join(', ')}${more}; include more of the surrounding text so it matches once, or set replaceAll`,
        '',
      );
    }
    text = e.replaceAll ? text.split(oldText).join(newText) : spliced(text, at[0] as number, oldText.length, newText);
    replacements += at.length;
  }
  return { ok: true, text: bom + (crlf ? text.replace(/\n/g, '\r\n') : text), replacements };
}

const fail = (problem: string, detail: string): EditOutcome => ({ ok: false, problem, detail });
const spliced = (s: string, at: number, len: number, put: string): string => s.slice(0, at) + put + s.slice(at + len);

/** Where `needle` starts in `text`, each occurrence not overlapping the one before. */
function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

const lineOf = (text: string, index: number): number => {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
};

/** The answer to a no-match: the closest region with line numbers, or why there is none. */
function closestAnswer(text: string, oldText: string, rel: string): string {
  const lines = text.split('\n');
  const region = closestRegion(lines, oldText);
  if (!region)
    return `No line of ${rel} resembles a line of oldText. Read the file (read) or search it (grep) for the text to change, then copy it exactly.`;
  const { from, to, similarity } = region;
  const shown = lines
    .slice(from, Math.min(to + 1, from + MAX_SHOWN))
    .map((l, k) => numbered(from + k + 1, l.replace(/\r$/, '')));
  const wanted = oldText.split('\n').map((l) => l.trim());
  const found = lines.slice(from, to + 1).map((l) => l.trim());
  const hint =
    wanted.join('\n') === found.join('\n')
      ? 'It differs from oldText only in indentation or other whitespace.'
      : 'Copy oldText exactly from the file (without the line numbers), then retry.';
  return [
    `The closest text in ${rel}: lines ${from + 1}–${to + 1}, ${Math.round(similarity * 100)}% similar:`,
    ...shown,
    ...(to - from + 1 > MAX_SHOWN ? [`… ${to - from + 1 - MAX_SHOWN} more lines`] : []),
    hint,
  ].join('\n');
}

/** How many of oldText's lines steer the search: its longest ones, the most telling. */
const PROBES = 12;
/** Lines less alike than this do not count as resembling each other. */
const MIN_LINE_SIMILARITY = 0.5;

/**
 * The window of the file's lines (as many as oldText has) that best matches oldText: each of a few
 * probe lines of oldText votes, with its similarity, for where the window would start given each
 * file line that resembles it. Linear in the file's length.
 */
export function closestRegion(
  lines: readonly string[],
  oldText: string,
): { from: number; to: number; similarity: number } | undefined {
  const wanted = oldText.replace(/\n$/, '').split('\n');
  const probes = wanted
    .map((l, i) => ({ i, text: l.trim() }))
    .filter((p) => p.text !== '')
    .sort((a, b) => b.text.length - a.text.length)
    .slice(0, PROBES)
    .map((p) => ({ ...p, grams: bigrams(p.text) }));
  if (probes.length === 0) return undefined;
  const votes = new Map<number, number>();
  for (let n = 0; n < lines.length; n++) {
    const line = (lines[n] as string).trim();
    if (line === '') continue;
    let grams: Set<string> | undefined;
    for (const p of probes) {
      const shorter = Math.min(line.length, p.text.length);
      const longer = Math.max(line.length, p.text.length);
      if (shorter / longer < MIN_LINE_SIMILARITY) continue;
      let s: number;
      if (line === p.text) s = 1;
      else {
        grams ??= bigrams(line);
        s = dice(grams, p.grams);
      }
      if (s >= MIN_LINE_SIMILARITY) votes.set(n - p.i, (votes.get(n - p.i) ?? 0) + s);
    }
  }
  let best: { start: number; score: number } | undefined;
  for (const [start, score] of votes) if (!best || score > best.score) best = { start, score };
  if (!best) return undefined;
  const from = Math.max(0, best.start);
  const to = Math.min(lines.length - 1, best.start + wanted.length - 1);
  return { from, to, similarity: Math.min(1, best.score / probes.length) };
}

function bigrams(s: string): Set<string> {
  const g = new Set<string>();
  for (let i = 0; i < s.length - 1; i++) g.add(s.slice(i, i + 2));
  if (s.length === 1) g.add(s);
  return g;
}

function dice(a: Set<string>, b: Set<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let common = 0;
  for (const g of small) if (large.has(g)) common++;
  return (2 * common) / (a.size + b.size);
}
