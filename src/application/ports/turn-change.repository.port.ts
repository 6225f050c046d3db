/** What each chat turn changed in its project's files, and whether it was undone (the `turn_changes` table). */
export interface TurnChangeRecord {
  /** The turn's task. */
  taskId: string;
  sessionId: string;
  /** The project directory the turn wrote in (absolute). */
  root: string;
  /** The snapshot of the files before the turn's first write (FileHistory). */
  before: string;
  /** The snapshot after the turn's latest write (absent until its first write finished). */
  after?: string | undefined;
  /** Files the turn changed (relative to the root, sorted). */
  files: string[];
  createdAt: string;
  /** When an undo put the turn's files back. */
  undoneAt?: string | undefined;
}

export interface TurnChangeRepository {
  /** The record of a turn in a directory (a turn may write in several: one record each). */
  get(taskId: string, root: string): Promise<TurnChangeRecord | undefined>;
  /** Stores a record; a second one for the same turn and directory is ignored (the first stays). */
  create(record: TurnChangeRecord): Promise<void>;
  /** The snapshot after the turn's latest write in `root` and the files it has changed there so far. */
  recordAfter(taskId: string, root: string, after: string, files: readonly string[]): Promise<void>;
  /** A session's records, oldest first. */
  listBySession(sessionId: string): Promise<TurnChangeRecord[]>;
  /** Marks records undone (each named by its turn's task and directory). */
  markUndone(records: readonly Pick<TurnChangeRecord, 'taskId' | 'root'>[], at: string): Promise<void>;
  /** Forgets a session's records (the session is deleted); how many went. */
  deleteBySession(sessionId: string): Promise<number>;
}
