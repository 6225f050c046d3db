/**
 * Snapshots of a project directory's files, kept apart from anything the user owns (the shadow
 * history: see the infrastructure's shadow-history.ts). What the undo of chat turns is built on:
 * the agent loop's {@link TurnCheckpoints} record a snapshot before a turn's first write and after
 * each write; `agents session undo` compares and restores files against them.
 */

/** A snapshot of a directory's files and the files that differ from an earlier one. */
export interface SnapshotDiff {
  /** The new snapshot. */
  snapshot: string;
  /** Files (relative to the root, `/`-separated, sorted) whose content, mode or presence differ. */
  files: string[];
}

export interface FileHistory {
  /**
   * Records the files under `root` as they are now (those the directory's ignore rules skip are
   * not recorded, except files the user's own git tracks) and keeps the snapshot under `keep`
   * (`[A-Za-z0-9._-]` segments separated by `/`). Returns its id.
   */
  snapshot(root: string, keep: string): Promise<string>;
  /** A new snapshot (kept under `keep`) and the files that differ between `from` and it. */
  changedSince(root: string, from: string, keep: string): Promise<SnapshotDiff>;
  /** Of `files`, those whose content, mode or presence now differ from snapshot `at`. */
  differing(root: string, at: string, files: readonly string[]): Promise<string[]>;
  /**
   * The text of `files` in snapshot `at`, or as they are now when `at` is undefined (as a snapshot
   * would record them); a file not there is left out of the map. Read only, for showing a diff.
   */
  read(root: string, at: string | undefined, files: readonly string[]): Promise<Map<string, string>>;
  /** Puts `files` back as they are in snapshot `at`: written byte for byte, removed where `at` has none. */
  restore(root: string, at: string, files: readonly string[]): Promise<void>;
}
