/**
 * What a model is sent of a session: the earlier turns (their transcripts, or for turns no LLM
 * answered, the user's words and the answer's text), trimmed oldest first to the model's window.
 */
import { textOf, type Task } from '../../../domain/a2a.model.ts';
import type { ModelMessage, ModelTool, TokenCounter } from '../../ports/language-model.port.ts';
import type { Transcript } from '../../ports/transcript.port.ts';

/** A turn of the session before this one, as model messages. */
export function priorTurn(task: Task, transcript: Transcript | undefined): ModelMessage[] {
  if (transcript) return closeOpenCalls(transcript.messages);
  const out: ModelMessage[] = [];
  for (const m of task.history ?? []) if (m.role === 'ROLE_USER') out.push({ role: 'user', text: textOf(m.parts) });
  const answer = (task.artifacts ?? [])
    .filter((a) => a.name === 'response' || a.artifactId === 'response')
    .map((a) => textOf(a.parts))
    .join('');
  if (answer) out.push({ role: 'assistant', text: answer });
  return out;
}

/** Tool calls a turn never answered (it ended waiting for an approval) get a result saying so. */
export function closeOpenCalls(messages: readonly ModelMessage[]): ModelMessage[] {
  const out = [...messages];
  const last = out[out.length - 1];
  if (last?.role === 'assistant' && last.toolCalls && last.toolCalls.length > 0)
    out.push({
      role: 'tool',
      results: last.toolCalls.map((c) => ({
        id: c.id,
        name: c.name,
        output: 'not run: the turn ended before this call was approved',
        isError: true,
      })),
    });
  return out;
}

/** The tokens a message costs, counted once per message object. */
export class MessageTokens {
  private readonly cache = new WeakMap<object, number>();

  private readonly counter: TokenCounter;

  constructor(counter: TokenCounter) {
    this.counter = counter;
  }

  async of(m: ModelMessage): Promise<number> {
    const hit = this.cache.get(m);
    if (hit !== undefined) return hit;
    const text =
      m.role === 'user'
        ? m.text
        : m.role === 'assistant'
          ? `${m.text}${(m.toolCalls ?? []).map((c) => `${c.name}${c.arguments}`).join('')}`
          : m.results.map((r) => `${r.name}${r.output}`).join('');
    // A few tokens of framing per message, as chat formats add.
    const n = (await this.counter.count(text)) + 4;
    this.cache.set(m, n);
    return n;
  }

  async ofAll(ms: readonly ModelMessage[]): Promise<number> {
    let n = 0;
    for (const m of ms) n += await this.of(m);
    return n;
  }

  async ofTools(tools: readonly ModelTool[]): Promise<number> {
    if (tools.length === 0) return 0;
    return this.counter.count(JSON.stringify(tools));
  }
}

export interface Fitted {
  messages: ModelMessage[];
  /** Earlier turns left out to fit the window. */
  droppedTurns: number;
  /** Tokens of the prompt as counted here (system, tools, messages). */
  promptTokens: number;
}

/**
 * The prompt within `budget` tokens: the fixed part (system, tools, this turn) always, then the
 * earlier turns newest first while they fit. Undefined when the fixed part alone does not fit.
 */
export async function fitToWindow(
  tokens: MessageTokens,
  budget: number,
  fixed: number,
  turns: readonly ModelMessage[][],
  current: readonly ModelMessage[],
): Promise<Fitted | undefined> {
  let used = fixed + (await tokens.ofAll(current));
  if (used > budget) return undefined;
  const kept: ModelMessage[][] = [];
  let i = turns.length - 1;
  for (; i >= 0; i--) {
    const turn = turns[i] ?? [];
    const n = await tokens.ofAll(turn);
    if (used + n > budget) break;
    used += n;
    kept.unshift(turn);
  }
  return { messages: [...kept.flat(), ...current], droppedTurns: i + 1, promptTokens: used };
}
