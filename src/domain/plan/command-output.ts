/**
 * A command's output as a plan keeps it, and its tail as the views show it. The tool runner keeps
 * the whole output (up to a MiB, cut from the middle beyond); `plan status`, `plan explain`, the
 * run summary and the TUI show the last lines, and `plan explain --output` all of it.
 */
import { z } from 'zod';

/** The whole output of a command (stdout and stderr interleaved as they came). */
export const CommandOutput = z.object({
  /** The output, or its head and tail with a line saying what was cut when it was longer than the limit. */
  text: z.string(),
  /** How many bytes the command wrote in all. */
  bytes: z.number().int().nonnegative(),
  truncated: z.boolean(),
});
export type CommandOutput = z.infer<typeof CommandOutput>;

/** How many lines of a command's output the views show. */
export const TAIL_LINES = 20;
/** At most this many characters of them: one line can be a MiB (a minified bundle, a progress bar). */
export const TAIL_CHARS = 4000;

export interface OutputTail {
  /** The last lines, fit to show on a terminal (control sequences taken out). */
  text: string;
  /** Lines of the output before them (0: the tail is all of it). */
  omittedLines: number;
}

/**
 * The last `lines` lines of a command's output, for people: a carriage return keeps what a
 * terminal would show of its line (the last redraw of a progress bar), escape sequences and other
 * control characters are taken out (the output is the sandboxed command's to choose, the terminal
 * is the user's), and a line longer than the room left keeps its end.
 */
export function outputTail(text: string, lines = TAIL_LINES, maxChars = TAIL_CHARS): OutputTail {
  const all = text.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
  if (all.length === 1 && all[0] === '') return { text: '', omittedLines: 0 };
  const kept: string[] = [];
  let room = maxChars;
  for (let i = all.length - 1; i >= 0 && kept.length < lines && room > 0; i--) {
    const line = shownLine(all[i] ?? '');
    const cut = line.length > room ? `…${line.slice(line.length - room + 1)}` : line;
    kept.push(cut);
    room -= cut.length + 1;
  }
  return { text: kept.reverse().join('\n'), omittedLines: all.length - kept.length };
}

/** All of an output, fit to show on a terminal like the tail (`plan explain --output` on a terminal). */
export function shownOutput(text: string): string {
  return text.replace(/\r\n/g, '\n').split('\n').map(shownLine).join('\n');
}

const ESCAPES =
  // eslint-disable-next-line no-control-regex -- escape sequences (CSI, OSC, others) begin with control characters.
  /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])|\u009b[0-?]*[ -/]*[@-~]/g;
// eslint-disable-next-line no-control-regex -- what is left of the C0 and C1 controls, but the tab.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** One line as a terminal would leave it: after its last carriage return, without control sequences. */
function shownLine(line: string): string {
  const ended = line.replace(/\r+$/, '');
  const redrawn = ended.slice(ended.lastIndexOf('\r') + 1);
  return redrawn.replace(ESCAPES, '').replace(CONTROLS, '');
}
