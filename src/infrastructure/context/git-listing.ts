/**
 * A git checkout's files and recent history, each in one git child process through the one runner
 * (../sandbox/git.ts: nothing the repository configured runs): `ls-files` for what is tracked or
 * untracked-but-not-ignored, `log --name-only` for what the last commits touched. HEAD is read from
 * the files under the git directory, so a cache can tell whether history moved without starting git.
 */
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { git, gitOut, splitNul, type GitOptions } from '../sandbox/git.ts';
import { NO_PROGRAMS } from '../sandbox/sandbox-diff.ts';

/** A checkout's root is its work tree: a repository's core.worktree cannot point our git elsewhere. */
const at = (root: string, timeoutMs: number): GitOptions => ({
  timeoutMs,
  env: { GIT_OPTIONAL_LOCKS: '0' },
  ...(lstatSync(path.join(root, '.git'), { throwIfNoEntry: false }) ? { workTree: root } : {}),
});

/** How many commits the recency ranking looks back. */
export const RECENCY_DEPTH = 200;
/** A commit that touched more files (an import, a mass reformat) says nothing about any one of them. */
export const BULK_COMMIT_FILES = 2_000;

export interface GitRoot {
  /** The repository's git directory (absolute; a worktree's own one). */
  gitDir: string;
  /** Where refs live (the main repository's git directory for a linked worktree). */
  commonDir: string;
}

/** The git directory of the checkout `root` is in, or undefined when it is in none. */
export async function gitRootOf(root: string): Promise<GitRoot | undefined> {
  // The usual layouts without starting git: `.git` a directory, or a linked worktree's `gitdir:` file.
  const dotGit = path.join(root, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (st?.isDirectory() && lstatSync(path.join(dotGit, 'HEAD'), { throwIfNoEntry: false })?.isFile())
    return { gitDir: dotGit, commonDir: dotGit };
  const linked = st?.isFile() ? /^gitdir: (.+)$/m.exec(readText(dotGit) ?? '')?.[1]?.trim() : undefined;
  if (linked !== undefined) {
    const gitDir = path.resolve(root, linked);
    const common = readText(path.join(gitDir, 'commondir'))?.trim();
    if (lstatSync(path.join(gitDir, 'HEAD'), { throwIfNoEntry: false })?.isFile())
      return { gitDir, commonDir: common ? path.resolve(gitDir, common) : gitDir };
  }
  try {
    const out = await gitOut(root, ['rev-parse', '--absolute-git-dir', '--git-common-dir'], at(root, 30_000));
    const [gitDir, common] = out.split('\n');
    if (!gitDir || !common) return undefined;
    return { gitDir, commonDir: path.resolve(root, common) };
  } catch {
    return undefined;
  }
}

/** The paths `git ls-files` gives for root (relative to it): tracked and untracked, `.gitignore` honoured. */
export async function lsFiles(root: string): Promise<string[]> {
  const { stdout } = await git(
    root,
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'],
    at(root, 120_000),
  );
  return splitNul(stdout);
}

/**
 * HEAD's commit id from the git directory's files (a loose ref, or packed-refs); undefined when it
 * cannot be told that way (no commit yet, or an unusual layout: the caller then asks git).
 */
export function readHead(r: GitRoot): string | undefined {
  const head = readText(path.join(r.gitDir, 'HEAD'))?.trim();
  if (head === undefined) return undefined;
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
  if (ref === undefined) return undefined;
  const loose = readText(path.join(r.commonDir, ref))?.trim();
  if (loose !== undefined) return /^[0-9a-f]{40,64}$/.test(loose) ? loose : undefined;
  const packed = readText(path.join(r.commonDir, 'packed-refs'));
  for (const line of packed?.split('\n') ?? []) {
    const [id, name] = line.split(' ');
    if (name === ref && id !== undefined && /^[0-9a-f]{40,64}$/.test(id)) return id;
  }
  return undefined;
}

/** HEAD's commit id, asking git when the files do not tell; undefined before the first commit. */
export async function headOf(root: string, r: GitRoot): Promise<string | undefined> {
  const fromFiles = readHead(r);
  if (fromFiles !== undefined) return fromFiles;
  try {
    return await gitOut(root, ['rev-parse', '--verify', '-q', 'HEAD'], at(root, 30_000));
  } catch {
    return undefined;
  }
}

/**
 * For each path (relative to root) the last {@link RECENCY_DEPTH} commits touched, the newest one's
 * index; commits of more than {@link BULK_COMMIT_FILES} files are left out.
 */
export async function recentPaths(root: string): Promise<{ commits: number; paths: Map<string, number> }> {
  const { stdout } = await git(
    root,
    [
      'log',
      ...NO_PROGRAMS,
      '-n',
      String(RECENCY_DEPTH),
      '--no-renames',
      '--relative',
      '--name-only',
      '--format=%x01%H',
      '-z',
    ],
    at(root, 60_000),
  );
  const paths = new Map<string, number>();
  let commit = -1;
  let touched: string[] = [];
  let bulk = false;
  const flush = (): void => {
    if (!bulk) for (const p of touched) if (!paths.has(p)) paths.set(p, commit);
    touched = [];
    bulk = false;
  };
  for (const field of splitNul(stdout)) {
    if (field.startsWith('\x01')) {
      flush();
      commit++;
      continue;
    }
    if (commit < 0 || bulk) continue;
    const p = field.replace(/^\n/, '');
    if (p === '') continue;
    touched.push(p);
    if (touched.length > BULK_COMMIT_FILES) bulk = true;
  }
  flush();
  return { commits: commit + 1, paths };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
