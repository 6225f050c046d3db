/**
 * Reads of a work tree's git files (gitrepository-layout(5)) without starting git: where its git
 * directories are, and what HEAD points at. Synchronous, as the other reads of a plan step's git
 * files: an asynchronous read is a round trip through libuv's thread pool that costs ten times the read.
 */
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A work tree's own git directory, and the repository's common one (shared by its work trees). */
export interface WorktreeFiles {
  gitDir: string;
  common: string;
}

/** What HEAD of a work tree is: its branch (undefined when detached) and the commit it points at. */
export interface WorktreeHead extends WorktreeFiles {
  ref: string | undefined;
  oid: string;
}

/** A file's text, trimmed; undefined when it cannot be read. */
function readTrimmed(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Where the git files of the work tree at `root` are: `.git` a directory or a `gitdir:` file,
 * then `commondir`. Undefined for anything else.
 */
export function worktreeFiles(root: string): WorktreeFiles | undefined {
  const dotGit = path.join(root, '.git');
  let gitDir: string;
  try {
    const st = lstatSync(dotGit);
    if (st.isDirectory()) gitDir = dotGit;
    else {
      const link = st.isFile() ? readFileSync(dotGit, 'utf8').trim() : '';
      if (!link.startsWith('gitdir: ')) return undefined;
      gitDir = path.resolve(root, link.slice(8));
    }
  } catch {
    return undefined;
  }
  const common = readTrimmed(path.join(gitDir, 'commondir'));
  return { gitDir, common: common === undefined ? gitDir : path.resolve(gitDir, common) };
}

/**
 * HEAD of the work tree at `root`, read from the repository's files (see {@link worktreeFiles};
 * then `HEAD` and a loose ref). Undefined whenever the layout is anything else (a packed ref, the
 * reftable backend, an unexpected file).
 */
export function worktreeHead(root: string): WorktreeHead | undefined {
  const files = worktreeFiles(root);
  const head = files && readTrimmed(path.join(files.gitDir, 'HEAD'));
  if (!files || head === undefined) return undefined;
  if (OBJECT_ID.test(head)) return { ...files, ref: undefined, oid: head };
  // Branches live in the common directory, shared by all of a repository's work trees.
  const ref = /^ref: (refs\/heads\/[^\0]+)$/.exec(head)?.[1];
  if (ref === undefined || ref.split('/').some((s) => s === '..' || s === '.' || s === '')) return undefined;
  const oid = readTrimmed(path.join(files.common, ref));
  return oid !== undefined && OBJECT_ID.test(oid) ? { ...files, ref, oid } : undefined;
}

/**
 * The commit HEAD of the work tree at `root` points at, read from the files ({@link worktreeHead})
 * instead of a `git rev-parse HEAD` process. Undefined when the files do not say: the caller then asks git.
 */
export function headFromFiles(root: string): string | undefined {
  return worktreeHead(root)?.oid;
}
