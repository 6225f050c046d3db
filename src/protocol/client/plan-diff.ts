/**
 * Helpers over `plan/diff`'s structured files (`files`: paths, status, hunks), for front ends that
 * show a diff: rebuild one side of a file from the other (VS Code's and ACP's side-by-side views),
 * or show what the hunks alone tell. No diff text is parsed here: the server sends the structure.
 */
import type { DiffFile, DiffHunk, DiffLine } from '../../domain/plan/plan-views.ts';

export type { DiffFile, DiffHunk, DiffLine };

/** The file's path as shown: the new one, else (deleted) the old one. */
export const diffPath = (f: DiffFile): string => f.newPath ?? f.oldPath ?? '';

const splitLines = (text: string): string[] => {
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
};
const joinLines = (lines: readonly string[], eol: boolean): string =>
  lines.length === 0 ? '' : `${lines.join('\n')}${eol ? '\n' : ''}`;

/** Whether a side's last line lacks a newline: the last line of that side marked `noNewline`. */
function lacksNewline(f: DiffFile, side: 'old' | 'new'): boolean {
  const last = f.hunks
    .at(-1)
    ?.lines.filter((l) => l.kind === ' ' || l.kind === (side === 'old' ? '-' : '+'))
    .at(-1);
  return last?.noNewline === true;
}

/**
 * The text on the other side of `file`: `forward` turns the old text into the new one, otherwise
 * the new into the old. Undefined when the text does not match the hunks' context (the file has
 * changed since), so nothing wrong is ever shown as the other side.
 */
export function applyHunks(text: string, file: DiffFile, forward: boolean): string | undefined {
  const lines = splitLines(text);
  const out: string[] = [];
  let at = 0;
  const [drop, keep] = forward ? ['-', '+'] : ['+', '-'];
  for (const h of file.hunks) {
    // A side with no lines starts where its lines would go: the same index either way.
    const from = (forward ? h.oldStart : h.newStart) - 1;
    if (from < at || from > lines.length) return undefined;
    out.push(...lines.slice(at, from));
    at = from;
    for (const l of h.lines) {
      if (l.kind === ' ' || l.kind === drop) {
        if (lines[at] !== l.text) return undefined;
        at++;
      }
      if (l.kind === ' ' || l.kind === keep) out.push(l.text);
    }
  }
  out.push(...lines.slice(at));
  const unchangedEnd = at < lines.length || file.hunks.length === 0;
  // Past the last hunk the text keeps its own ending; otherwise the hunks say.
  const eol = unchangedEnd ? text.endsWith('\n') : !lacksNewline(file, forward ? 'new' : 'old');
  return joinLines(out, eol);
}

/**
 * What the hunks alone tell of each side, with a marker line for each stretch of unchanged lines
 * they leave out. Shown when neither side's full text can be read.
 */
export function hunkTexts(file: DiffFile): { original: string; modified: string } {
  const oldSide: string[] = [];
  const newSide: string[] = [];
  let oldAt = 1;
  for (const h of file.hunks) {
    const skipped = h.oldStart - oldAt;
    if (skipped > 0) {
      const marker = `⋯ ${skipped} unchanged line${skipped === 1 ? '' : 's'} ⋯`;
      oldSide.push(marker);
      newSide.push(marker);
    }
    for (const l of h.lines) {
      if (l.kind !== '+') oldSide.push(l.text);
      if (l.kind !== '-') newSide.push(l.text);
    }
    oldAt = h.oldStart + h.oldLines;
  }
  return { original: joinLines(oldSide, true), modified: joinLines(newSide, true) };
}

/** One file as unified diff text (git's headers and `\ No newline` marks), for where texts cannot be shown. */
export function fileUnified(f: DiffFile): string {
  const a = f.oldPath ?? f.newPath ?? '';
  const b = f.newPath ?? f.oldPath ?? '';
  const out = [`diff --git a/${a} b/${b}`];
  // The file's mode is not in the structure: git's usual one stands in (the text is for reading).
  if (f.oldPath === null) out.push('new file mode 100644');
  else if (f.newPath === null) out.push('deleted file mode 100644');
  else if (f.status === 'renamed') out.push(`rename from ${a}`, `rename to ${b}`);
  if (f.binary)
    out.push(
      `Binary files ${f.oldPath === null ? '/dev/null' : `a/${a}`} and ${f.newPath === null ? '/dev/null' : `b/${b}`} differ`,
    );
  else if (f.hunks.length > 0)
    out.push(f.oldPath === null ? '--- /dev/null' : `--- a/${a}`, f.newPath === null ? '+++ /dev/null' : `+++ b/${b}`);
  for (const h of f.hunks) {
    out.push(`@@ -${header(h.oldStart, h.oldLines)} +${header(h.newStart, h.newLines)} @@`);
    for (const l of h.lines) {
      out.push(`${l.kind}${l.text}`);
      if (l.noNewline) out.push('\\ No newline at end of file');
    }
  }
  return `${out.join('\n')}\n`;
}

/** A hunk header's `start,count`, git's way: an empty side names the line before it. */
const header = (start: number, count: number): string =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;
