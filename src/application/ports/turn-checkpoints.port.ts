/**
 * The undo history of a chat: before a turn first writes to the project, the project's files are
 * recorded in a shadow history that never touches the user's git refs, index or stash; after each
 * write the turn's changed files are known. `agents session undo` puts the files back as they were
 * before a turn (SessionService owns undo and the listing; this is what the agent loop calls).
 */

/** A chat turn working on a project's directory. */
export interface TurnRef {
  session: string;
  /** The turn's task. */
  task: string;
  /** The project's directory (absolute) the turn writes in. */
  root: string;
}

export interface TurnCheckpoints {
  /**
   * Before a write of the turn (a file tool or a command): records the files as they are. The
   * first call of a turn does the work; later calls of the same turn return at once.
   */
  before(turn: TurnRef): Promise<void>;
  /** After a write of the turn: the files (relative to the root) that now differ from before the turn. */
  after(turn: TurnRef): Promise<string[]>;
}
