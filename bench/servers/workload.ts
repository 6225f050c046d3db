/**
 * What the bench asks every server to do, written once so the three servers (ours, the reference
 * and the floor) and the load generator agree on it.
 */

/** The token every bench server is started with. */
export const BENCH_TOKEN = 'bench-token-0123456789abcdef';

/** A message text asking the streaming actor for `n` artifact events: `stream:<n>`. */
export const streamText = (n: number): string => `stream:${n}`;

/** The number of artifact events a message asks for, or undefined for an ordinary message. */
export function streamCount(text: string | undefined): number | undefined {
  const m = /^stream:(\d{1,5})$/.exec(text ?? '');
  return m ? Number(m[1]) : undefined;
}

/** The text of artifact chunk `i` of a streamed answer (about 64 bytes, like a few LLM tokens). */
export const chunkTextOf = (i: number): string =>
  `chunk ${String(i).padStart(5, '0')} of a streamed answer, padded to a token-ish size. `;

/** The same split as builtin/echo: about `n` chunks on word boundaries, keeping every character. */
export function echoChunks(text: string, n = 4): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [text];
  const per = Math.max(1, Math.ceil(words.length / n));
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += per) chunks.push(words.slice(i, i + per).join(''));
  return chunks.length > 0 ? chunks : [''];
}

/** The text of a message's text parts, one per line (what the echo answers). */
export function messageText(message: Record<string, unknown> | undefined): string {
  const parts = (Array.isArray(message?.['parts']) ? message['parts'] : []) as Array<Record<string, unknown>>;
  return parts
    .map((p) => p['text'])
    .filter((t) => typeof t === 'string')
    .join('\n');
}

/** The text every SendMessage of the bench carries (a short chat line). */
export const SEND_TEXT = 'Hello agent, please restate this short benchmark message.';
