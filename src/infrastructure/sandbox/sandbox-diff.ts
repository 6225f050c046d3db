/** Diffs between two trees of a sandbox, as the port's {@link SandboxDiff}. */
import type { FileChange, SandboxDiff } from '../../application/index.js';
import { git, gitOut, splitNul } from './git.js';

const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '-M', '--src-prefix=a/', '--dst-prefix=b/'];

interface RawEntry {
  path: string;
  oldPath?: string;
  status: FileChange['status'];
  newBlob: string;
  newMode: string;
}

/**
 * The changes from tree-ish `from` to tree-ish `to` in the repository at `root`, optionally limited
 * to some paths (literal pathspecs, relative to the root).
 */
export async function diffTrees(
  root: string,
  from: string,
  to: string,
  paths: readonly string[] = [],
): Promise<SandboxDiff> {
  const spec = ['--', ...paths];
  const opts = { confine: true };
  const [unified, raw, numstat] = await Promise.all([
    git(root, ['--literal-pathspecs', 'diff', ...DIFF_FLAGS, from, to, ...spec], opts).then((r) => r.stdout),
    git(
      root,
      ['--literal-pathspecs', 'diff', ...DIFF_FLAGS, '--raw', '--no-abbrev', '-z', from, to, ...spec],
      opts,
    ).then((r) => r.stdout),
    git(root, ['--literal-pathspecs', 'diff', ...DIFF_FLAGS, '--numstat', '-z', from, to, ...spec], opts).then(
      (r) => r.stdout,
    ),
  ]);
  const entries = parseRaw(raw);
  const counts = parseNumstat(numstat);
  const sizes = await blobSizes(
    root,
    entries.filter((e) => e.status !== 'deleted' && e.newMode !== '160000').map((e) => e.newBlob),
  );
  const files: FileChange[] = entries.map((e) => {
    const c = counts.get(e.path);
    const binary = c?.binary ?? false;
    return {
      path: e.path,
      status: e.status,
      additions: c?.additions ?? 0,
      deletions: c?.deletions ?? 0,
      size: e.status === 'deleted' ? 0 : (sizes.get(e.newBlob) ?? 0),
      binary,
    };
  });
  return {
    unified,
    files,
    stats: {
      files: files.length,
      additions: files.reduce((n, f) => n + f.additions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
    },
  };
}

function parseRaw(out: string): RawEntry[] {
  const f = splitNul(out);
  const entries: RawEntry[] = [];
  for (let i = 0; i < f.length;) {
    const head = f[i++] ?? '';
    // ":<old mode> <new mode> <old sha> <new sha> <status>"
    const [, newMode = '', , newBlob = '', status = ''] = head.slice(1).split(' ');
    const letter = status.charAt(0);
    if (letter === 'R' || letter === 'C') {
      const oldPath = f[i++] ?? '';
      const p = f[i++] ?? '';
      entries.push({ path: p, oldPath, status: letter === 'R' ? 'renamed' : 'added', newBlob, newMode });
    } else {
      const p = f[i++] ?? '';
      entries.push({
        path: p,
        status: letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified',
        newBlob,
        newMode,
      });
    }
  }
  return entries;
}

function parseNumstat(out: string): Map<string, { additions: number; deletions: number; binary: boolean }> {
  const f = splitNul(out);
  const m = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  for (let i = 0; i < f.length;) {
    const [add = '0', del = '0', p = ''] = (f[i++] ?? '').split('\t');
    // A rename has an empty path here, then the old and the new path as two more fields.
    const file = p === '' ? ((i += 2), f[i - 1] ?? '') : p;
    const binary = add === '-';
    m.set(file, { additions: binary ? 0 : Number(add), deletions: binary ? 0 : Number(del), binary });
  }
  return m;
}

async function blobSizes(root: string, blobs: string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (blobs.length === 0) return sizes;
  const out = await gitOut(root, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
    confine: true,
    input: blobs.join('\n') + '\n',
  });
  for (const line of out.split('\n')) {
    const [sha = '', size = ''] = line.split(' ');
    if (/^\d+$/.test(size)) sizes.set(sha, Number(size));
  }
  return sizes;
}

/** Paths that differ between two tree-ishes (renames split into a deletion and an addition). */
export async function changedPaths(root: string, from: string, to: string, confine = true): Promise<string[]> {
  const out = await gitOut(root, ['diff', '--no-ext-diff', '--no-renames', '--name-only', '-z', from, to], { confine });
  return splitNul(out);
}
