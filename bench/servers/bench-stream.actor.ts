/**
 * `builtin/bench-stream` (bench only, proposed for src/application/actors/): answers `stream:<n>`
 * with n artifact chunks of one artifact between WORKING and COMPLETED, as fast as the task
 * service takes them; any other message is answered like builtin/echo. No LLM, no network.
 */
import type { Actor, ActorTurn } from '../../src/application/index.ts';
import { streamAnswer } from '../../src/application/actors/echo.actor.ts';
import { chunkTextOf, echoChunks, streamCount } from './workload.ts';

export class BenchStreamActor implements Actor {
  readonly name = 'builtin/bench-stream';
  readonly description = 'Emits the number of artifact chunks a `stream:<n>` message asks for (benchmarks).';

  async handle(turn: ActorTurn): Promise<void> {
    const text = turn.message.parts.map((p) => p.text ?? '').join('\n');
    // `paced:<n>:<ms>`: n chunks, one every ms (the cross-instance delay: a client of another
    // instance subscribes while they come).
    const paced = /^paced:(\d{1,4}):(\d{1,4})$/.exec(text);
    if (paced) {
      await turn.status('TASK_STATE_WORKING');
      for (let i = 0; i < Number(paced[1]); i++) {
        await new Promise((r) => setTimeout(r, Number(paced[2])));
        await turn.artifact(
          { artifactId: 'paced', parts: [{ text: chunkTextOf(i) }] },
          { append: i > 0, lastChunk: i === Number(paced[1]) - 1 },
        );
      }
      return turn.status('TASK_STATE_COMPLETED');
    }
    const n = streamCount(text);
    await streamAnswer(
      turn,
      n === undefined ? echoChunks(`You said: ${text}`) : Array.from({ length: n }, (_, i) => chunkTextOf(i)),
    );
  }
}
