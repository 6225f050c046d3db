/**
 * `builtin/bench-stream` (bench only, proposed for src/application/actors/): answers `stream:<n>`
 * with n artifact chunks of one artifact between WORKING and COMPLETED, as fast as the task
 * service takes them; any other message is answered like builtin/echo. No LLM, no network.
 */
import type { Actor, ActorTurn } from '../../src/application/index.js';
import { chunkTextOf, echoChunks, streamCount } from './workload.js';

export class BenchStreamActor implements Actor {
  readonly name = 'builtin/bench-stream';
  readonly description = 'Emits the number of artifact chunks a `stream:<n>` message asks for (benchmarks).';

  async handle(turn: ActorTurn): Promise<void> {
    await turn.status('TASK_STATE_WORKING');
    const text = turn.message.parts.map((p) => p.text ?? '').join('\n');
    const n = streamCount(text);
    const chunks = n === undefined ? echoChunks(`You said: ${text}`) : Array.from({ length: n }, (_, i) => chunkTextOf(i));
    for (let i = 0; i < chunks.length; i++) {
      if (turn.signal.aborted) return;
      await turn.artifact(
        { artifactId: 'response', name: 'response', parts: [{ text: chunks[i] ?? '' }] },
        { append: i > 0, lastChunk: i === chunks.length - 1 },
      );
    }
    await turn.status('TASK_STATE_COMPLETED');
  }
}
