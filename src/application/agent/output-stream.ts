/**
 * A command's output as it comes, appended to an artifact of the running task so a client sees it
 * live: chunks are sent one after the other (never awaited by the command), up to KEPT_OUTPUT_BYTES
 * (the rest only counted), and `close` ends the artifact once the command has ended.
 */
import type { Artifact } from '../../domain/a2a.model.ts';
import type { ArtifactOptions } from '../ports/actor.port.ts';
import { KEPT_OUTPUT_BYTES, type CommandOutputChunk } from '../ports/sandbox.port.ts';

export class OutputStream {
  private sent = 0;
  private opened = false;
  private chain: Promise<void> = Promise.resolve();

  private readonly send: (a: Artifact, o: ArtifactOptions) => Promise<void>;
  private readonly artifact: Omit<Artifact, 'parts'>;

  constructor(send: (a: Artifact, o: ArtifactOptions) => Promise<void>, artifact: Omit<Artifact, 'parts'>) {
    this.send = send;
    this.artifact = artifact;
  }

  push(chunk: CommandOutputChunk): void {
    if (this.sent >= KEPT_OUTPUT_BYTES || chunk.text === '') return;
    const text = Buffer.from(chunk.text)
      .subarray(0, KEPT_OUTPUT_BYTES - this.sent)
      .toString();
    this.sent += Buffer.byteLength(text);
    const append = this.opened;
    this.opened = true;
    // A client that cannot be told is no reason to stop the command: the whole output is kept anyway.
    this.chain = this.chain
      .then(() => this.send({ ...this.artifact, parts: [{ text }] }, { append }))
      .catch(() => undefined);
  }

  /** Waits for what was pushed, then ends the artifact (nothing when no output came). */
  async close(): Promise<void> {
    await this.chain;
    if (this.opened) await this.send({ ...this.artifact, parts: [{ text: '' }] }, { append: true, lastChunk: true });
  }
}
