/**
 * What the context service needs of a resource's files (DESIGN.md §4.5): the listing (`.gitignore`
 * honoured, `.git/` never), a file's text, and which files git history touched lately. An
 * implementation may answer `list` from a cache it revalidates; `restat` and `read` always look
 * at the file system.
 */

/** One regular file of a resource. */
export interface InventoryEntry {
  /** Relative to the root, `/`-separated, never starting with `/` or `..`. */
  readonly path: string;
  readonly bytes: number;
  readonly mtimeMs: number;
}

export interface FileListing {
  /** The root as given. */
  readonly root: string;
  /** `git`: `git ls-files` (tracked and untracked, not ignored); `walk`: a directory walk with `.gitignore` rules. */
  readonly source: 'git' | 'walk';
  /**
   * Sorted by path (UTF-16 code unit order). The array is the same object for as long as the
   * listing is valid (a caller may key derived data on it); `restat` may replace entries in it.
   */
  readonly files: readonly InventoryEntry[];
  /** Whether this answer came from the cache (revalidated) rather than a new listing. */
  readonly fromCache: boolean;
  /** Whether the listing stopped at the implementation's file cap. */
  readonly truncated: boolean;
}

export type FileRead =
  /** `bytes`/`mtimeMs` are those of the opened file; `truncated` when it had more than maxBytes. */
  | { kind: 'text'; text: string; bytes: number; mtimeMs: number; truncated: boolean }
  | { kind: 'binary'; bytes: number; mtimeMs: number }
  | { kind: 'unreadable'; reason: string };

/** Which files the last commits touched. */
export interface GitRecency {
  /** The commit the history was read from. */
  readonly head: string;
  /** How many commits were read (at most the implementation's depth, ~200). */
  readonly commits: number;
  /**
   * Path (relative to the root) → index of the newest of those commits that touched it (0: HEAD).
   * Commits that touched a great many files (~2,000: an import, a mass reformat) are left out.
   */
  readonly paths: ReadonlyMap<string, number>;
}

export interface FileInventory {
  /** The root's files. Refuses (AppError UNAVAILABLE) a root that does not exist or cannot be listed. */
  list(root: string, signal?: AbortSignal): Promise<FileListing>;
  /**
   * The current size and mtime of listed files, in the order asked (undefined: gone, or no longer
   * a regular file); a cached listing is updated with what was found.
   */
  restat(root: string, paths: readonly string[]): Promise<Array<InventoryEntry | undefined>>;
  /** A file's text, at most maxBytes of it; binary (a NUL byte near the start) and symlinks are not text. */
  read(root: string, path: string, maxBytes: number): Promise<FileRead>;
  /** The last commits' touched paths; undefined when the root is not in a git checkout (or has no commit). */
  recency(root: string): Promise<GitRecency | undefined>;
  /**
   * The include/exclude globs as one test (a file is included when it matches some include, or there
   * are none, and no exclude). Throws AppError INVALID_PARAMS naming a pattern that cannot be compiled.
   */
  globFilter(include: readonly string[], exclude: readonly string[]): (path: string) => GlobVerdict;
}

export type GlobVerdict = 'included' | 'not-included' | 'excluded';
