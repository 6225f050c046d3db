/**
 * The journal of an apply in progress: written (and fsynced) before the apply's commit point, read
 * by the recovery after a crash, removed when the apply is complete. One file per sandbox in
 * `<sandboxes>/.applying/<planId>.<resource>.json`: one directory to read at start-up and before
 * each operation on a repository.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { messageOf } from '../../domain/errors.ts';

/** A git-worktree apply: the target branch moves from `oldTip` to `newCommit`, then the user's index and work tree follow. */
export interface WorktreeJournal {
  version: 1;
  kind: 'worktree';
  id: string;
  /** The user's work tree. */
  repository: string;
  /** Its git directory (where the index is). */
  gitDir: string;
  /** The full ref, `refs/heads/<target>`. */
  branch: string;
  oldTip: string;
  newCommit: string;
  /** Paths the commit adds or changes (written into the work tree) and deletes. */
  written: string[];
  deleted: string[];
  createdAt: string;
}

/**
 * A copy apply: the new files are first written into a staging directory inside the user's
 * directory (`phase: staging`: a crash rolls back), then — the commit point is the journal
 * rewritten with `phase: commit` — deletions made and staged files renamed into place (a crash
 * rolls forward).
 */
export interface CopyJournal {
  version: 1;
  kind: 'copy';
  id: string;
  /** The user's directory. */
  repository: string;
  staging: string;
  phase: 'staging' | 'commit';
  /** Each path written, and its file's name in the staging directory. */
  writes: { path: string; staged: string }[];
  deleted: string[];
  createdAt: string;
}

export type ApplyJournal = WorktreeJournal | CopyJournal;

/** A new journal id (also names the staging directory and the index lock's owner). */
export const journalId = (): string => `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;

export class ApplyJournals {
  readonly dir: string;

  /** `root`: the sandboxes' directory. */
  constructor(root: string) {
    this.dir = path.join(root, '.applying');
  }

  /** The journal file of the sandbox at `<root>/<planId>/<resource>`. */
  fileOf(sandboxRoot: string): string {
    return path.join(this.dir, `${path.basename(path.dirname(sandboxRoot))}.${path.basename(sandboxRoot)}.json`);
  }

  /** Writes a journal durably: a temporary file fsynced, renamed over, the directory fsynced. */
  write(file: string, journal: ApplyJournal): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(journal));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    syncDir(this.dir);
  }

  remove(file: string): void {
    rmSync(file, { force: true });
    syncDir(this.dir);
  }

  /** Every journal (a file that cannot be read as one is reported as `broken`). */
  list(): { file: string; journal?: ApplyJournal; broken?: string }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json'))
      .sort()
      .map((n) => {
        const file = path.join(this.dir, n);
        try {
          const journal = JSON.parse(readFileSync(file, 'utf8')) as ApplyJournal;
          if (journal.version !== 1 || (journal.kind !== 'worktree' && journal.kind !== 'copy'))
            return { file, broken: 'not a journal this version knows' };
          return { file, journal };
        } catch (e) {
          return { file, broken: messageOf(e) };
        }
      });
  }
}

/** fsync of a directory, so a rename or an unlink in it survives a crash of the machine. */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
