/**
 * A command's output in its two forms: what a model is given (the head and the tail, so a long
 * build log costs a few thousand tokens, not a million) and what its record keeps (the whole of it
 * up to KEPT_OUTPUT_BYTES, cut from the middle beyond).
 */
import type { CommandOutput } from '../../application/index.ts';
import type { KeptOutput, ProcessResult } from './process-runner.ts';

/** Of a long output a model sees at most this many lines, and bytes, from each end. */
export const MODEL_EDGE_LINES = 200;
export const MODEL_EDGE_BYTES = 16 * 1024;

/** The record's copy: the runner's kept output (already within KEPT_OUTPUT_BYTES). */
export const commandOutputOf = (r: Pick<ProcessResult, 'output' | 'kept'>): CommandOutput => ({
  text: r.output,
  bytes: r.kept.bytes,
  truncated: r.kept.truncated,
});

/**
 * The model's copy: the whole output when it is short, else its first and last lines (each end
 * within MODEL_EDGE_LINES and MODEL_EDGE_BYTES) around a line saying how much was left out.
 */
export function modelOutputOf(k: KeptOutput): string {
  if (!k.truncated) {
    const lines = k.newlines + (k.head === '' || k.head.endsWith('\n') ? 0 : 1);
    if (lines <= 2 * MODEL_EDGE_LINES && k.bytes <= 2 * MODEL_EDGE_BYTES) return k.head;
  }
  const head = firstLines(Buffer.from(k.head));
  const tail = lastLines(Buffer.from(k.truncated ? k.tail : k.head));
  const cutBytes = k.bytes - head.length - tail.length;
  const cutLines = k.newlines - newlinesIn(head) - newlinesIn(tail);
  const headText = head.toString('utf8').replace(/\uFFFD+$/, '');
  const tailText = tail.toString('utf8').replace(/^\uFFFD+/, '');
  // A cut inside one long line removes no whole line: only its bytes are worth saying.
  const what = cutLines > 0 ? `${cutLines} line${cutLines === 1 ? '' : 's'} (${cutBytes} bytes)` : `${cutBytes} bytes`;
  return `${headText}${headText.endsWith('\n') ? '' : '\n'}… ${what} cut …\n${tailText}`;
}

/** The start of `b`: up to the end of its MODEL_EDGE_LINES-th line, or MODEL_EDGE_BYTES, whichever comes first. */
function firstLines(b: Buffer): Buffer {
  let end = Math.min(b.length, MODEL_EDGE_BYTES);
  for (let lines = 0, nl = b.indexOf(10); nl !== -1 && nl < end; nl = b.indexOf(10, nl + 1))
    if (++lines === MODEL_EDGE_LINES) end = nl + 1;
  return b.subarray(0, end);
}

/** The end of `b`: from the start of its MODEL_EDGE_LINES-th line from the end, or its last MODEL_EDGE_BYTES. */
function lastLines(b: Buffer): Buffer {
  let start = Math.max(0, b.length - MODEL_EDGE_BYTES);
  // A final line feed ends the last line; it does not start another one.
  const from = b.length - (b[b.length - 1] === 10 ? 2 : 1);
  for (
    let lines = 0, nl = from < 0 ? -1 : b.lastIndexOf(10, from);
    nl !== -1 && nl >= start;
    nl = nl === 0 ? -1 : b.lastIndexOf(10, nl - 1)
  )
    if (++lines === MODEL_EDGE_LINES) start = nl + 1;
  return b.subarray(start);
}

function newlinesIn(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
}

/** `300 ms`, `2 s`, `1.5 s`: a time limit as a person reads it. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** A command line as a shell would read it back: words with anything special single-quoted. */
export function shellQuote(words: readonly string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}
