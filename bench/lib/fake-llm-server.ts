/**
 * The LLM provider of the `llm` workload: the fake OpenAI-compatible server of the tests
 * (test/support/fake-llm.ts) in a child process of its own, scripted by the prompt it is sent:
 *
 * - `bench-stream n=<n> gap=<ms>`: n text chunks, `gap` ms apart; each chunk's text is the moment
 *   it was written to the socket (`@<epoch ms with µs>`), stamped at `res.write` (below), so a
 *   client on the same machine can tell how long the chunk took to reach it;
 * - `bench-tools steps=<s> path=<file>`: one `builtin__read-file` call of `file` until the request
 *   carries s tool results, then a short final text.
 *
 * It talks to the bench over the IPC channel: `{ type: 'ready', url }` once listening; on
 * `{ type: 'take' }` it answers `{ type: 'bodies', bodies }` (the raw JSON of the generation
 * requests received since the last take) and forgets them; it exits when the channel closes.
 */
import http from 'node:http';
import { startFakeOpenAI, type FakeReply, type RecordedRequest } from '../../test/support/fake-llm.ts';

/** What the chunks carry until they are written; replaced by the send time then. */
export const SENT_MARK = '@@SENT@@';
/** A chunk's send time, as the fake writes it: `@1796144262123.456`. */
export const SENT_PATTERN = /@(\d+\.\d+)/g;

export const streamPrompt = (n: number, gapMs: number): string => `bench-stream n=${n} gap=${gapMs}`;
export const toolsPrompt = (steps: number, path: string): string => `bench-tools steps=${steps} path=${path}`;
export const TOOLS_DONE = 'Read the file every time; done.';

export type FromFake = { type: 'ready'; url: string } | { type: 'bodies'; bodies: string[] };
export type ToFake = { type: 'take' };

type Json = Record<string, unknown>;

/** The text of the last user message of an OpenAI chat body (content as a string or as parts). */
function lastUserText(body: Json): string {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Json;
    if (m['role'] !== 'user') continue;
    const c = m['content'];
    if (typeof c === 'string') return c;
    if (Array.isArray(c)) return (c as Json[]).map((p) => (typeof p['text'] === 'string' ? p['text'] : '')).join('');
    return '';
  }
  return '';
}

export function replyTo(body: Json): FakeReply {
  const text = lastUserText(body);
  const stream = /bench-stream n=(\d+) gap=(\d+(?:\.\d+)?)/.exec(text);
  if (stream) {
    const n = Number(stream[1]);
    return {
      text: Array.from({ length: n }, () => `${SENT_MARK} `),
      delayMs: Number(stream[2]),
      usage: { input: 20, output: n },
    };
  }
  const tools = /bench-tools steps=(\d+) path=(\S+)/.exec(text);
  if (tools) {
    const steps = Number(tools[1]);
    const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
    const done = messages.filter((m) => m['role'] === 'tool').length;
    if (done >= steps) return { text: [TOOLS_DONE], usage: { input: 100, output: 8 } };
    return {
      toolCalls: [{ id: `call_${done}`, name: 'builtin__read-file', arguments: JSON.stringify({ path: tools[2] }) }],
      usage: { input: 100, output: 12 },
    };
  }
  return { text: ['The bench fake answers only bench-stream and bench-tools prompts.'] };
}

async function main(): Promise<void> {
  // Stamp the send time into a chunk as it is handed to the socket (not when the reply was
  // scripted: the fake builds every frame up front).
  const proto = http.ServerResponse.prototype as unknown as { write: (...args: unknown[]) => boolean };
  const write = proto.write;
  proto.write = function (this: http.ServerResponse, chunk: unknown, ...rest: unknown[]): boolean {
    if (typeof chunk === 'string' && chunk.includes(SENT_MARK))
      chunk = chunk.replace(SENT_MARK, `@${(performance.timeOrigin + performance.now()).toFixed(3)}`);
    return write.call(this, chunk, ...rest);
  };

  const fake = await startFakeOpenAI();
  fake.reply((req: RecordedRequest) => replyTo((req.body ?? {}) as Json));
  const send = (m: FromFake): void => void process.send?.(m);
  process.on('message', (m: ToFake) => {
    if (m.type !== 'take') return;
    const taken = fake.requests.splice(0, fake.requests.length);
    const bodies = taken
      .filter((r) => r.path.startsWith('/v1/chat/completions') && r.body !== undefined)
      .map((r) => JSON.stringify(r.body));
    send({ type: 'bodies', bodies });
  });
  process.on('disconnect', () => void fake.close().finally(() => process.exit(0)));
  process.on('SIGTERM', () => void fake.close().finally(() => process.exit(0)));
  send({ type: 'ready', url: fake.url });
}

// Run as a script (not when the workload imports the prompt helpers).
if (process.send !== undefined && /fake-llm-server\.[jt]s$/.test(process.argv[1] ?? '')) await main();
