/**
 * A plan's unified diff (git's, with `a/` and `b/` prefixes) as the two texts of each file that
 * VS Code's diff editor shows side by side.
 */

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Each line with its mark: ' ' context, '-' removed, '+' added. */
  lines: string[];
}

export interface FilePatch {
  oldPath: string | undefined;
  newPath: string | undefined;
  binary: boolean;
  hunks: Hunk[];
  /** Whether the last line of each side lacks a newline (`\ No newline at end of file`). */
  oldNoEol: boolean;
  newNoEol: boolean;
}

const unquote = (p: string): string => (p.startsWith('"') ? (JSON.parse(p) as string) : p);
const side = (p: string, prefix: string): string | undefined =>
  p === '/dev/null' ? undefined : unquote(p).replace(new RegExp(`^${prefix}/`), '');

/** The files of a unified diff, in order. */
export function parseUnifiedDiff(unified: string): FilePatch[] {
  const files: FilePatch[] = [];
  let file: FilePatch | undefined;
  let hunk: Hunk | undefined;
  let last: '-' | '+' | ' ' | undefined;
  for (const line of unified.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const m = /^diff --git (?:"a\/(.*)"|a\/(\S+)) (?:"b\/(.*)"|b\/(.+))$/.exec(line);
      file = {
        oldPath: m ? (m[1] ?? m[2]) : undefined,
        newPath: m ? (m[3] ?? m[4]) : undefined,
        binary: false,
        hunks: [],
        oldNoEol: false,
        newNoEol: false,
      };
      files.push(file);
      hunk = undefined;
      continue;
    }
    if (!file) continue;
    if (!hunk) {
      if (line.startsWith('--- ')) file.oldPath = side(line.slice(4), 'a');
      else if (line.startsWith('+++ ')) file.newPath = side(line.slice(4), 'b');
      else if (line.startsWith('new file mode')) file.oldPath = undefined;
      else if (line.startsWith('deleted file mode')) file.newPath = undefined;
      else if (line.startsWith('rename from ')) file.oldPath = line.slice(12);
      else if (line.startsWith('rename to ')) file.newPath = line.slice(10);
      else if (line.startsWith('Binary files ') || line === 'GIT binary patch') file.binary = true;
    }
    const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (h) {
      hunk = {
        oldStart: Number(h[1]),
        oldLines: h[2] === undefined ? 1 : Number(h[2]),
        newStart: Number(h[3]),
        newLines: h[4] === undefined ? 1 : Number(h[4]),
        lines: [],
      };
      file.hunks.push(hunk);
      continue;
    }
    if (!hunk) continue;
    const mark = line.charAt(0);
    if (mark === ' ' || mark === '-' || mark === '+') {
      hunk.lines.push(line);
      last = mark;
    } else if (line.startsWith('\\')) {
      if (last === '-' || last === ' ') file.oldNoEol = true;
      if (last === '+' || last === ' ') file.newNoEol = true;
    }
  }
  return files;
}

const splitLines = (text: string): { lines: string[]; eol: boolean } => {
  if (text === '') return { lines: [], eol: true };
  const eol = text.endsWith('\n');
  const lines = (eol ? text.slice(0, -1) : text).split('\n');
  return { lines, eol };
};
const joinLines = (lines: string[], eol: boolean): string =>
  lines.length === 0 ? '' : `${lines.join('\n')}${eol ? '\n' : ''}`;

/**
 * The text on the other side of `patch`: `forward` turns the old text into the new one, otherwise
 * the new into the old. Undefined when the text does not match the patch's context (the file has
 * changed since), so nothing wrong is ever shown as the other side.
 */
export function applyPatch(text: string, patch: FilePatch, forward: boolean): string | undefined {
  const { lines } = splitLines(text);
  const out: string[] = [];
  let at = 0;
  const [drop, keep] = forward ? ['-', '+'] : ['+', '-'];
  for (const h of patch.hunks) {
    const start = (forward ? h.oldStart : h.newStart) - 1;
    const count = forward ? h.oldLines : h.newLines;
    // A hunk with no lines on this side starts after the line it names.
    const from = count === 0 ? start + 1 : start;
    if (from < at || from > lines.length) return undefined;
    out.push(...lines.slice(at, from));
    at = from;
    for (const l of h.lines) {
      const mark = l.charAt(0);
      const body = l.slice(1);
      if (mark === ' ' || mark === drop) {
        if (lines[at] !== body) return undefined;
        at++;
      }
      if (mark === ' ' || mark === keep) out.push(body);
    }
  }
  out.push(...lines.slice(at));
  const noEol = forward ? patch.newNoEol : patch.oldNoEol;
  return joinLines(out, !noEol);
}

/**
 * What the patch alone tells of each side: its hunks, with a marker line for each stretch of
 * unchanged lines it leaves out. Shown when neither side's full text can be read.
 */
export function hunkTexts(patch: FilePatch): { original: string; modified: string } {
  const oldSide: string[] = [];
  const newSide: string[] = [];
  let oldAt = 1;
  for (const h of patch.hunks) {
    const skipped = h.oldStart - oldAt;
    if (skipped > 0) {
      const marker = `⋯ ${skipped} unchanged line${skipped === 1 ? '' : 's'} ⋯`;
      oldSide.push(marker);
      newSide.push(marker);
    }
    for (const l of h.lines) {
      const mark = l.charAt(0);
      if (mark !== '+') oldSide.push(l.slice(1));
      if (mark !== '-') newSide.push(l.slice(1));
    }
    oldAt = h.oldStart + h.oldLines;
  }
  return { original: joinLines(oldSide, true), modified: joinLines(newSide, true) };
}
