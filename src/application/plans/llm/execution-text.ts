import type { Plan } from '../../../domain/plan/plan.ts';
import type { Transcript, TranscriptStore } from '../../ports/transcript.port.ts';
import type { TaskHandle } from '../plan.recorder.ts';
import type { ContextSnapshotRef } from '../../context/context.types.ts';
import type { FinishArgs } from './execution.prompt.ts';

/** An execution's conversation as kept in the transcript store while it waits for an approval. */
export interface ExecutionTranscript extends Transcript {
  /** The system prompt of this conversation: an answered approval goes on with the same one. */
  system: string;
  /** The context the actor was given. */
  snapshot?: ContextSnapshotRef | undefined;
  /** The actor called finish in the step whose calls are pending. */
  finishing?: FinishArgs | undefined;
}

/**
 * What an execution run says on its task besides status: the model's words streamed as the
 * `execution` text artifact, and its conversation kept in the transcript store (to go on with after
 * an approval, and as it ended).
 */
export class ExecutionText {
  private open = false;
  /** The step whose words were streamed last. */
  private step = -1;

  private readonly turn: TaskHandle;
  private readonly plan: Plan;
  private readonly transcripts: TranscriptStore;
  private readonly actorName: string;

  constructor(turn: TaskHandle, plan: Plan, transcripts: TranscriptStore, actorName: string) {
    this.turn = turn;
    this.plan = plan;
    this.transcripts = transcripts;
    this.actorName = actorName;
  }

  /** The model's words (a new step starts a new paragraph). */
  async stream(delta: string, step: number): Promise<void> {
    const text = this.open && step !== this.step ? `\n\n${delta}` : delta;
    this.step = step;
    this.open = true;
    await this.turn.artifact(
      { artifactId: 'execution', name: 'execution', parts: [{ text }], metadata: { actor: this.actorName } },
      { append: true },
    );
  }

  /** Ends the streamed text (its last chunk), if any was streamed. */
  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    await this.turn.artifact(
      { artifactId: 'execution', name: 'execution', parts: [{ text: '' }] },
      { append: true, lastChunk: true },
    );
  }

  /** The conversation as it stands (its pending calls wait for an answer). */
  async save(t: Transcript): Promise<void> {
    await this.turn.stored(); // the task's row first (see ActorTurn.stored)
    await this.transcripts.save(this.turn.task.id, this.plan.contextId, t);
  }

  /** The conversation as it ended (nothing pending: an answer can no longer continue it); none yet: nothing. */
  async keep(t: ExecutionTranscript | undefined): Promise<void> {
    if (!t) return;
    const ended: ExecutionTranscript = { ...t, pending: undefined, finishing: undefined };
    await this.turn.stored();
    await this.transcripts.save(this.turn.task.id, this.plan.contextId, ended);
  }
}
