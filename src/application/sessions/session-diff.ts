/**
 * One file of `session/diff`: its text before and after as a structured diff (files and hunks, as
 * `plan/diff` gives them) and as unified text with git's headers. The texts come from the undo
 * history's snapshots (or the file as it is now), so the diff is computed here with jsdiff.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { hunkLines, type DiffFile } from '../../domain/plan/plan-views.ts';

/** A diff of two big, very different texts is not worth a long wait: past this it is summarised. */
const DIFF_TIMEOUT_MS = 1000;

/** git's own test for a binary file: a NUL byte among the first 8,000. */
const isBinary = (text: string | undefined): boolean => text !== undefined && text.slice(0, 8000).includes('\0');

const lineCount = (t: string): number => (t === '' ? 0 : t.split('\n').length - (t.endsWith('\n') ? 1 : 0));

/**
 * The diff of `path` from `before` to `after` (undefined: the file is not there on that side), or
 * undefined when both sides are the same.
 */
export function textDiff(
  path: string,
  before: string | undefined,
  after: string | undefined,
): { file: DiffFile; unified: string } | undefined {
  if (before === after) return undefined;
  const status: DiffFile['status'] = before === undefined ? 'added' : after === undefined ? 'deleted' : 'modified';
  const file: DiffFile = {
    oldPath: before === undefined ? null : path,
    newPath: after === undefined ? null : path,
    status,
    hunks: [],
  };
  const head = [`diff --git a/${path} b/${path}`];
  if (status === 'added') head.push('new file mode 100644');
  if (status === 'deleted') head.push('deleted file mode 100644');
  const from = before === undefined ? '/dev/null' : `a/${path}`;
  const to = after === undefined ? '/dev/null' : `b/${path}`;
  if (isBinary(before) || isBinary(after)) {
    head.push(`Binary files ${from} and ${to} differ`);
    return { file: { ...file, binary: true }, unified: `${head.join('\n')}\n` };
  }
  const patch = structuredPatch(from, to, before ?? '', after ?? '', undefined, undefined, {
    context: 3,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (!patch) {
    const [old, now] = [lineCount(before ?? ''), lineCount(after ?? '')];
    head.push(
      `--- ${from}`,
      `+++ ${to}`,
      `[the change is too large to show as a diff: ${old} lines before, ${now} after]`,
    );
    return { file, unified: `${head.join('\n')}\n` };
  }
  file.hunks = patch.hunks.map((h) => ({
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: hunkLines(h.lines),
  }));
  return { file, unified: `${head.join('\n')}\n${formatPatch(patch, FILE_HEADERS_ONLY)}` };
}
