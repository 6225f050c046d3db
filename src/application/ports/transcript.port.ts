import type { ModelMessage, ModelToolCall, ModelToolResult, ModelUsage } from './language-model.port.ts';

/** A tool call of a step that waits for a person's answer before it runs. */
export interface PendingCalls {
  /** The step's calls, in the model's order. */
  calls: ModelToolCall[];
  /** Results of the calls before `next` (ran, denied or refused). */
  results: ModelToolResult[];
  /** The call waiting for the answer. */
  next: number;
}

/** What an LLM turn said to its model and heard back, and where it stands. */
export interface Transcript {
  /** This turn's messages: the user's, then the model's answers and the tool results. */
  messages: ModelMessage[];
  /** Model steps taken so far. */
  steps: number;
  usage: ModelUsage;
  toolCalls: number;
  /** Set while the turn waits for an approval. */
  pending?: PendingCalls | undefined;
  /** A control tool (`finish`) ended the work in the step whose calls are pending: the loop stops once they are settled. */
  ending?: boolean | undefined;
  /** Steps in a row whose every call was refused (the loop gives up at MAX_MALFORMED_STEPS). */
  malformedSteps?: number | undefined;
  /** "Always" answers given in this turn: `tool`, and a command line's first words (see AlwaysRule). */
  always?: Array<{ tool: string; commandPrefix?: string[] | undefined }> | undefined;
}

export interface TranscriptStore {
  get(taskId: string): Promise<Transcript | undefined>;
  /** Stores (replaces) a task's transcript. */
  save(taskId: string, contextId: string, transcript: Transcript): Promise<void>;
  /** The transcripts of a context's tasks, by task id (for the history of a later turn). */
  forContext(contextId: string, taskIds: readonly string[]): Promise<Map<string, Transcript>>;
}
