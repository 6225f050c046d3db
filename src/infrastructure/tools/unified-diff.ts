/** Unified diffs of one file's text, for the edit tools' answers and for approval previews (jsdiff). */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';

/** A diff of two big, very different texts is not worth a long wait: past this it is summarised. */
const DIFF_TIMEOUT_MS = 1000;

export interface FileDiff {
  /** The unified diff; '' when nothing changes. */
  text: string;
  additions: number;
  deletions: number;
}

/**
 * The unified diff (git's `a/` `b/` paths; `/dev/null` for a file that does not exist yet) of
 * `rel` from `before` to `after`.
 */
export function unifiedDiff(rel: string, before: string | undefined, after: string, context = 3): FileDiff {
  if (before === after) return { text: '', additions: 0, deletions: 0 };
  const from = before === undefined ? '/dev/null' : `a/${rel}`;
  const patch = structuredPatch(from, `b/${rel}`, before ?? '', after, undefined, undefined, {
    context,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (!patch) {
    const [old, now] = [lineCount(before ?? ''), lineCount(after)];
    return {
      text: `--- ${from}\n+++ b/${rel}\n[the change is too large to show as a diff: ${old} lines before, ${now} after]\n`,
      additions: now,
      deletions: old,
    };
  }
  let additions = 0;
  let deletions = 0;
  for (const h of patch.hunks)
    for (const l of h.lines) {
      if (l.startsWith('+')) additions++;
      else if (l.startsWith('-')) deletions++;
    }
  return { text: formatPatch(patch, FILE_HEADERS_ONLY), additions, deletions };
}

/** A diff shortened to its first `maxLines` lines, saying how many more there were. */
export function shortDiff(diff: string, maxLines: number): string {
  const lines = diff.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length <= maxLines) return diff;
  return `${lines.slice(0, maxLines).join('\n')}\n… ${lines.length - maxLines} more diff lines not shown\n`;
}

const lineCount = (t: string): number => (t === '' ? 0 : t.split('\n').length - (t.endsWith('\n') ? 1 : 0));
