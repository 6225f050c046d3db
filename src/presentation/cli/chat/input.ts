/**
 * The chat's input: a readline on stdin (a terminal or a pipe) that yields whole messages — a
 * trailing `\` continues a line, a bracketed paste is one message — with Ctrl-C, Esc and an
 * outside abort wired to the running turn, Tab completion of `/commands` and `@paths`, and on a
 * terminal a history kept across chats.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { configPath } from '../config-paths.ts';
import type { RunContext } from '../runner.ts';
import type { TurnCancel } from '../support/turn-cancel.ts';
import { completeMention } from './mentions.ts';

/** The turn that runs, if one does: Ctrl-C and Esc cancel it and the chat goes on. */
export interface LiveTurn {
  running?: TurnCancel | undefined;
}

/** Lines kept in the history file. */
export const HISTORY_LINES = 1000;
const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

/** `chat_history` beside config.yaml. */
export const historyPath = (env: NodeJS.ProcessEnv): string => join(dirname(configPath(env)), 'chat_history');

/**
 * Joins typed lines into messages: a line ending in `\` goes on (the `\` dropped), and lines of
 * a paste go on until the line typed after it.
 */
export class LineJoiner {
  private lines: string[] = [];

  /** The message this line completes, or undefined when it goes on. */
  push(line: string, pasting = false): string | undefined {
    if (pasting) {
      this.lines.push(line);
      return undefined;
    }
    if (line.endsWith('\\') && !line.endsWith('\\\\')) {
      this.lines.push(line.slice(0, -1));
      return undefined;
    }
    this.lines.push(line);
    const message = this.lines.join('\n');
    this.lines = [];
    return message;
  }

  /** A message is being continued (the prompt says so). */
  get continuing(): boolean {
    return this.lines.length > 0;
  }

  /** Drops a started message (Ctrl-C at a continuation prompt). */
  reset(): void {
    this.lines = [];
  }
}

export interface ChatInput {
  readonly rl: Interface;
  readonly interactive: boolean;
  /** Whole messages, trimmed; ends at end of input or when the chat is interrupted. */
  messages(): AsyncGenerator<string>;
  /** Shows the prompt (a terminal only); `ask` replaces `you › ` once (an approval's question). */
  prompt(ask?: string): void;
  close(): void;
}

/** Completions: `/` at the start names commands, `@…` at the end a path under the chat's directory. */
export type SlashCompleter = (line: string) => [string[], string];

export function chatInput(ctx: RunContext, live: LiveTurn, slashNames: SlashCompleter): ChatInput {
  const { ui } = ctx;
  const interactive = ctx.io.stdin.isTTY === true && ui.human;
  const cwd = process.cwd();
  const file = historyPath(ctx.io.env);
  const rl = createInterface({
    input: ctx.io.stdin,
    terminal: interactive,
    ...(interactive
      ? {
          output: ctx.io.stdout,
          history: loadHistory(file),
          historySize: HISTORY_LINES,
          removeHistoryDuplicates: true,
          completer: (line: string, done: (err: Error | null, result: [string[], string]) => void): void => {
            if (/^\/\S*$/.test(line)) return done(null, slashNames(line));
            completeMention(line, cwd).then(
              (r) => done(null, r),
              () => done(null, [[], line]),
            );
          },
        }
      : {}),
  });
  const you = ui.pal.bold('you › ');
  const more = ui.pal.dim('  … ');
  const joiner = new LineJoiner();
  let pasting = false;
  // Whether each line came inside a paste, taken when readline reads it: the loop may consume the
  // line only after the paste has ended.
  const pasted: boolean[] = [];
  rl.on('line', () => pasted.push(pasting));
  let history: string[] = [];
  rl.on('history', (h: string[]) => (history = h));
  rl.on('SIGINT', () => {
    // A second Ctrl-C while the cancel is awaited: leave at once (onAbort stops waiting).
    if (live.running?.requested) return ctx.interrupt();
    if (live.running) return void live.running.cancel();
    // Text on the line (or a message begun): Ctrl-C drops it, as a shell does; at an empty prompt it leaves.
    if (rl.line !== '' || joiner.continuing) {
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
      joiner.reset();
      rl.setPrompt(you);
      ctx.io.stdout.write('\n');
      rl.prompt();
      return;
    }
    ctx.interrupt();
  });
  const onKey = (_s: string | undefined, key: { name?: string } | undefined): void => {
    if (key?.name === 'paste-start') pasting = true;
    else if (key?.name === 'paste-end') pasting = false;
    else if (key?.name === 'escape' && live.running && !live.running.requested) void live.running.cancel();
  };
  // readline reads keys on a terminal; Esc and the paste brackets are no line editing keys of its own.
  if (interactive) {
    ctx.io.stdin.on('keypress', onKey);
    ctx.io.stdout.write(PASTE_ON);
  }
  // Ctrl-C from outside (a pipe's SIGINT, or the second Ctrl-C above): the running turn is
  // canceled (or, when that is already awaited, given up) and the chat ends.
  const onAbort = (): void => {
    if (live.running?.requested) live.running.abandon();
    else void live.running?.cancel();
    rl.close();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let closed = false;
  return {
    rl,
    interactive,
    async *messages() {
      for await (const raw of rl) {
        const inPaste = pasted.shift() ?? false;
        const message = joiner.push(raw, inPaste);
        if (message === undefined) {
          if (interactive && !inPaste) {
            rl.setPrompt(more);
            rl.prompt();
          }
          continue;
        }
        rl.setPrompt(you);
        yield message.trim();
      }
    },
    prompt(ask) {
      if (!interactive) return;
      rl.setPrompt(ask ?? you);
      rl.prompt();
      if (ask) rl.setPrompt(you);
    },
    close() {
      if (closed) return;
      closed = true;
      ctx.signal.removeEventListener('abort', onAbort);
      ctx.io.stdin.off('keypress', onKey);
      if (interactive) {
        ctx.io.stdout.write(PASTE_OFF);
        saveHistory(file, history);
      }
      rl.close();
    },
  };
}

/** The history file, newest line first as readline keeps it (missing or unreadable: none). */
export function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .reverse()
      .slice(0, HISTORY_LINES);
  } catch {
    return [];
  }
}

/**
 * Writes the history oldest first (as a shell's), readable by its owner only: chat lines may hold
 * what a person would not show. A failure to write loses the history, not the chat.
 */
export function saveHistory(file: string, newestFirst: readonly string[]): void {
  if (newestFirst.length === 0) return;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const lines = newestFirst.slice(0, HISTORY_LINES).reverse();
    writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  } catch {
    // The history is a convenience: the chat has ended well without it.
  }
}
