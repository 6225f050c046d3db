/** Diffs between two trees of a sandbox, as the port's {@link SandboxDiff}. */
import type { FileChange, SandboxDiff } from '../../application/index.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { withSnapshot } from './git-stage.ts';
import { outOf, quote, splitNul, type GitRunner } from './git.ts';

/** Every diff of ours: no external diff or textconv program, whatever the repository configured. */
export const NO_PROGRAMS = ['--no-ext-diff', '--no-textconv'] as const;
const DIFF_FLAGS = ['--no-color', ...NO_PROGRAMS, '-M', '--src-prefix=a/', '--dst-prefix=b/'];

interface RawEntry {
  path: string;
  oldPath?: string;
  status: FileChange['status'];
  newBlob: string;
  newMode: string;
}

/** `git diff`'s arguments for all three views at once: raw entries, numstat entries, an empty field, the patch. */
const COMBINED = [...DIFF_FLAGS, '--raw', '--no-abbrev', '--numstat', '-z', '-p'];

/**
 * The changes from tree-ish `from` to tree-ish `to` in the repository at `root`, optionally limited
 * to some paths (literal pathspecs, relative to the root).
 */
export async function diffTrees(
  run: GitRunner,
  root: string,
  from: string,
  to: string,
  paths: readonly string[] = [],
): Promise<SandboxDiff> {
  // One git process gives all three views (each a process of its own was most of the cost of a diff).
  const out = await run
    .run(root, ['--literal-pathspecs', 'diff', ...COMBINED, from, to, '--', ...paths], { confine: true })
    .then((r) => r.stdout);
  const parsed = parseCombined(out);
  const blobs = parsed.entries.filter((e) => e.status !== 'deleted' && e.newMode !== '160000').map((e) => e.newBlob);
  const sizes =
    blobs.length === 0
      ? ''
      : await outOf(run, root, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
          confine: true,
          input: blobs.join('\n') + '\n',
        });
  return sandboxDiff(parsed, sizes);
}

/**
 * The sandbox's work tree (everything in it now: see git-stage.ts's snapshot) against tree-ish
 * `from`, in one request: the snapshot, the diff and the new blobs' sizes (their ids read back
 * from the raw entries by `sed`: a line that only looks like one costs a "missing" answer).
 */
export async function diffWorkTree(
  run: GitRunner,
  root: string,
  from: string,
  opts: { force: boolean; nested: 'refuse' | 'skip' },
): Promise<SandboxDiff> {
  const tail = `g diff ${COMBINED.map(quote).join(' ')} "$B" "$t" >"$D/diff" || exit $?
tr '\\0' '\\n' <"$D/diff" | sed -n 's/^:[0-7]* [0-7]* [0-9a-f]* \\([0-9a-f]*\\) [A-Z][0-9]*$/\\1/p' |
  g cat-file --batch-check='%(objectname) %(objectsize)'
`;
  return withSnapshot(run, root, opts, tail, { B: from }, async (r, dir) =>
    sandboxDiff(parseCombined(await readFile(path.join(dir, 'diff'), 'utf8')), r.stdout),
  );
}

/** The port's diff, from the parsed combined output and `cat-file --batch-check` lines of sizes. */
function sandboxDiff(parsed: ReturnType<typeof parseCombined>, sizeLines: string): SandboxDiff {
  const { entries, counts, unified } = parsed;
  const sizes = new Map<string, number>();
  for (const line of sizeLines.split('\n')) {
    const [sha = '', size = ''] = line.split(' ');
    if (/^\d+$/.test(size)) sizes.set(sha, Number(size));
  }
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

/** The NUL-terminated fields of `git diff --raw --numstat -z -p` output, read one at a time. */
class Fields {
  #at = 0;

  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  get rest(): string {
    return this.text.slice(this.#at);
  }

  get done(): boolean {
    return this.#at >= this.text.length;
  }

  peek(): string {
    const end = this.text.indexOf('\0', this.#at);
    return this.text.slice(this.#at, end === -1 ? this.text.length : end);
  }

  next(): string {
    const end = this.text.indexOf('\0', this.#at);
    if (end === -1) throw new Error(`unexpected end of git diff output at ${this.#at}`);
    const field = this.text.slice(this.#at, end);
    this.#at = end + 1;
    return field;
  }
}

/**
 * Splits the combined output: as many numstat entries as raw ones follow the raw entries (both
 * list the same file pairs), then an empty field, then the patch exactly as a plain `git diff`
 * prints it. Anything else is refused rather than guessed at.
 */
function parseCombined(out: string): {
  entries: RawEntry[];
  counts: Map<string, { additions: number; deletions: number; binary: boolean }>;
  unified: string;
} {
  const f = new Fields(out);
  const entries: RawEntry[] = [];
  while (!f.done && f.peek().startsWith(':')) entries.push(rawEntry(f));
  const counts = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  for (let i = 0; i < entries.length; i++) {
    // "<added>\t<deleted>\t<path>": the path itself may hold tabs.
    const [add = '0', del = '0', ...rest] = f.next().split('\t');
    const p = rest.join('\t');
    // A rename has an empty path here, then the old and the new path as two more fields.
    const file = p === '' ? (f.next(), f.next()) : p;
    const binary = add === '-';
    counts.set(file, { additions: binary ? 0 : Number(add), deletions: binary ? 0 : Number(del), binary });
  }
  if (entries.length > 0 && !f.done && f.next() !== '') throw new Error('git diff output without its patch separator');
  return { entries, counts, unified: f.rest };
}

function rawEntry(f: Fields): RawEntry {
  // ":<old mode> <new mode> <old sha> <new sha> <status>"
  const [, newMode = '', , newBlob = '', status = ''] = f.next().slice(1).split(' ');
  const letter = status.charAt(0);
  if (letter === 'R' || letter === 'C') {
    const oldPath = f.next();
    const p = f.next();
    return { path: p, oldPath, status: letter === 'R' ? 'renamed' : 'added', newBlob, newMode };
  }
  return {
    path: f.next(),
    status: letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified',
    newBlob,
    newMode,
  };
}

/** Paths that differ between two tree-ishes (renames split into a deletion and an addition). */
export async function changedPaths(run: GitRunner, root: string, from: string, to: string): Promise<string[]> {
  const out = await outOf(run, root, ['diff', ...NO_PROGRAMS, '--no-renames', '--name-only', '-z', from, to], {
    confine: true,
  });
  return splitNul(out);
}
