/**
 * A plan's unified diff (git's, `a/` and `b/` prefixes) as files and hunks, for `plan/diff`: read
 * once here with jsdiff's git-aware `parsePatch`, so no front end parses a diff of its own.
 */
import { parsePatch, type StructuredPatch } from 'diff';
import { hunkLines, type DiffFile } from '../../domain/plan/plan-views.ts';

/** A side's path without git's prefix; null for `/dev/null` (the file is not on that side). */
function sidePath(name: string | undefined, prefix: 'a/' | 'b/'): string | null {
  if (name === undefined || name === '/dev/null') return null;
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

function statusOf(p: StructuredPatch, oldPath: string | null, newPath: string | null): DiffFile['status'] {
  if (p.isRename) return 'renamed';
  // A copy is a new file (as the sandbox's file list says of it).
  if (p.isCreate || p.isCopy || oldPath === null) return 'added';
  if (p.isDelete || newPath === null) return 'deleted';
  return 'modified';
}

/** The files of one unified diff, in order; `resource` names the sandbox they belong to. */
export function diffFiles(unified: string, resource?: string): DiffFile[] {
  if (unified.trim() === '') return [];
  return parsePatch(unified).map((p) => {
    const oldPath = p.isCreate ? null : sidePath(p.oldFileName, 'a/');
    const newPath = p.isDelete ? null : sidePath(p.newFileName, 'b/');
    const status = statusOf(p, oldPath, newPath);
    return {
      ...(resource !== undefined ? { resource } : {}),
      oldPath: status === 'added' ? null : oldPath,
      newPath,
      status,
      ...(p.isBinary ? { binary: true as const } : {}),
      hunks: p.hunks.map((h) => ({
        oldStart: h.oldStart,
        oldLines: h.oldLines,
        newStart: h.newStart,
        newLines: h.newLines,
        lines: hunkLines(h.lines),
      })),
    };
  });
}

/**
 * The files of a stored diff (the sandboxes' diffs joined, in order): each sandbox's files are the
 * next ones of the text, so each file gets its resource; when the counts disagree none is named.
 */
export function storedDiffFiles(
  unified: string,
  sandboxes: ReadonlyArray<{ resource: string; files: readonly unknown[] }>,
): DiffFile[] {
  const files = diffFiles(unified);
  if (sandboxes.reduce((n, s) => n + s.files.length, 0) !== files.length) return files;
  const owners = sandboxes.flatMap((s) => s.files.map(() => s.resource));
  return files.map((f, i) => ({ resource: owners[i] ?? '', ...f }));
}
