import { textOf, type Message } from '../../domain/a2a.model.ts';
import type { Actor, ActorTurn } from '../ports/actor.port.ts';

/** Splits text into about `n` chunks on word boundaries, keeping every character. */
export function chunkText(text: string, n: number): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [text];
  const per = Math.max(1, Math.ceil(words.length / n));
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += per) chunks.push(words.slice(i, i + per).join(''));
  return chunks.length > 0 ? chunks : [''];
}

/** What the first answer in a session adds: the echo is what a new user meets before any model is set up. */
export const ECHO_FIRST_TURN_HINT =
  '\n\n(builtin/echo only repeats what you say. To talk to a model, set one up with: agents init)';

/**
 * `builtin/echo`: restates the message, streamed as several chunks of one artifact. Its first
 * answer in a session also says how to connect a model.
 */
export class EchoActor implements Actor {
  readonly name = 'builtin/echo';
  readonly description = 'Restates each message, streamed in chunks; needs no LLM and no network.';
  async handle(turn: ActorTurn): Promise<void> {
    const hint = turn.opensSession === true && !turn.isFollowUp ? ECHO_FIRST_TURN_HINT : '';
    // The hint rides on the last chunk: no extra artifact event (and store write) for it.
    const chunks = chunkText(`You said: ${describe(turn.message)}`, 4);
    chunks[chunks.length - 1] += hint;
    await streamAnswer(turn, chunks);
  }
}

/**
 * WORKING, the chunks as one `response` artifact (appended, the last one marked), COMPLETED;
 * stops quietly when the task is cancelled.
 */
export async function streamAnswer(turn: ActorTurn, chunks: readonly string[]): Promise<void> {
  await turn.status('TASK_STATE_WORKING');
  for (let i = 0; i < chunks.length; i++) {
    if (turn.aborted) return;
    await turn.artifact(
      { artifactId: 'response', name: 'response', parts: [{ text: chunks[i] ?? '' }] },
      { append: i > 0, lastChunk: i === chunks.length - 1 },
    );
  }
  await turn.status('TASK_STATE_COMPLETED');
}

/** The message as text, naming the non-text parts. */
function describe(m: Message): string {
  const text = textOf(m.parts);
  const others = m.parts.filter((p) => p.text === undefined).length;
  if (others === 0) return text;
  return `${text}${text ? ' ' : ''}(+${others} non-text part${others > 1 ? 's' : ''})`;
}
