import type { Artifact, Message, Task, TaskState } from '../../domain/a2a.model.js';

export interface ArtifactOptions {
  append?: boolean;
  lastChunk?: boolean;
}

/** One turn of an actor on a task: the message that started it and ways to report progress. */
export interface ActorTurn {
  /** The task as it stands (read-only view). */
  readonly task: Readonly<Task>;
  readonly message: Message;
  /** True when the message continues an existing task (e.g. answers input-required). */
  readonly isFollowUp: boolean;
  /** Aborted when the task is cancelled. */
  readonly signal: AbortSignal;
  status(state: TaskState, text?: string): Promise<void>;
  artifact(artifact: Artifact, options?: ArtifactOptions): Promise<void>;
}

/** Something that answers messages: an LLM, or a deterministic built-in. */
export interface Actor {
  readonly name: string;
  readonly description: string;
  /** A direct answer without a task, or undefined to open a task for the message. */
  reply?(message: Message): Message | undefined;
  handle(turn: ActorTurn): Promise<void>;
}

export interface ActorCatalog {
  get(name: string): Actor | undefined;
  names(): string[];
}
