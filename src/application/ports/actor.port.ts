import type { Artifact, Message, Task, TaskState } from '../../domain/a2a.model.ts';
import type { Principal } from './principal.ts';

export interface ArtifactOptions {
  append?: boolean;
  lastChunk?: boolean;
}

/** A structured request or fact attached to a status (a DataPart) and event metadata. */
export interface StatusExtra {
  data?: unknown;
  metadata?: Record<string, unknown>;
  /**
   * Merged into the task's own metadata (kept with it, e.g. a turn's token usage) and sent with
   * this event's metadata. Give it with a status that settles the task or adds a message, so the
   * stored task has it.
   */
  taskMetadata?: Record<string, unknown>;
}

/** One turn of an actor on a task: the message that started it and ways to report progress. */
export interface ActorTurn {
  /** The task as it stands (read-only view). */
  readonly task: Readonly<Task>;
  readonly message: Message;
  /** True when the message continues an existing task (e.g. answers input-required). */
  readonly isFollowUp: boolean;
  /** True when this turn opens its session (no earlier task in it): what a greeting keys on. */
  readonly opensSession?: boolean;
  /**
   * The user who sent the message (or started the plan phase) of this turn: its model steps'
   * tokens count toward their per-user limits (ModelRequest.spender). Absent: nobody's.
   */
  readonly by?: string | undefined;
  /** Aborted when the task is cancelled. */
  readonly signal: AbortSignal;
  /** Whether {@link signal} is aborted, without making the signal (which costs ~5 µs) just to ask. */
  readonly aborted: boolean;
  status(state: TaskState, text?: string, extra?: StatusExtra): Promise<void>;
  artifact(artifact: Artifact, options?: ArtifactOptions): Promise<void>;
  /**
   * Resolves once the task's row and what the turn recorded so far are stored. A turn may start
   * before its task's row is written (the row and the first events share a commit); a write that
   * references the task from outside its events — the turn's transcript — waits for this, or on
   * PostgreSQL it can reach the database first and break the foreign key. Never rejects: a failed
   * store is the turn's failure, which the runner reports.
   */
  stored(): Promise<void>;
}

/** Something that answers messages: an LLM, or a deterministic built-in. */
export interface Actor {
  readonly name: string;
  readonly description: string;
  /** A direct answer without a task, or undefined to open a task for the message. */
  reply?(message: Message): Message | undefined;
  handle(turn: ActorTurn): Promise<void>;
}

/** Finds the actor to run for an actor name. */
export interface ActorCatalog {
  /**
   * The runnable actor, undefined when no actor has that name; throws INVALID_STATE for an actor
   * that exists but cannot chat here (e.g. its provider is not available).
   */
  resolve(name: string): Promise<Actor | undefined>;
  /** Names of the actors that always exist (the built-in ones). */
  names(): string[];
  /**
   * The actors a principal may chat with, for a hint: the built-in ones, then the registered ones
   * of the namespaces it reads (the first page of them), and how many more there are.
   */
  available(principal: Principal): Promise<{ names: string[]; more: number }>;
}
