/**
 * The chat's slash command dispatcher: one table of commands (the chat's own, chat/chat-slash.ts,
 * and the session ones, chat/session-slash.ts), one parse of a typed line, one answer for a name
 * that is not there.
 */
import { SESSION_SLASH } from './session-slash.ts';
import { CHAT_SLASH } from './chat-slash.ts';
import type { SlashCommand, SlashContext, SlashResult } from './slash-types.ts';

/** `/exit` and `/quit` end the chat: the loop does that, so they have no `run` of their own. */
export const LEAVING: Readonly<Record<string, Pick<SlashCommand, 'usage' | 'summary'>>> = {
  exit: { usage: '/exit', summary: 'leave the chat (as Ctrl-D does)' },
  quit: { usage: '/quit', summary: 'leave the chat' },
};

/** What a typed line is: a message to send, or a slash command with its arguments. */
export type ChatLine =
  { kind: 'message'; text: string } | { kind: 'slash'; name: string; args: string[]; line: string };

/**
 * A line that starts with `/` is a command (`/undo 2 --force`); `//` sends the rest with a
 * literal `/` (a path, a regex); anything else is a message.
 */
export function parseChatLine(line: string): ChatLine {
  if (line.startsWith('//')) return { kind: 'message', text: line.slice(1) };
  if (!line.startsWith('/')) return { kind: 'message', text: line };
  const [head = '', ...args] = line.slice(1).trim().split(/\s+/);
  return { kind: 'slash', name: head.toLowerCase(), args, line };
}

/** What dispatching a slash command came to. */
export type SlashOutcome =
  | { kind: 'exit' }
  | { kind: 'ran'; name: string; result: SlashResult }
  | { kind: 'unknown'; name: string; suggestion: string | undefined };

/** The commands a chat knows: its own first, then the session ones (a session one may not replace a chat one). */
export class SlashDispatcher {
  readonly commands: Readonly<Record<string, SlashCommand>>;

  constructor(extra: Readonly<Record<string, SlashCommand>> = SESSION_SLASH) {
    const all: Record<string, SlashCommand> = { ...CHAT_SLASH };
    for (const [name, cmd] of Object.entries(extra)) if (!(name in all) && !(name in LEAVING)) all[name] = cmd;
    all['help'] = helpCommand(() =>
      this.names().map((name) => {
        const d = this.describe(name);
        return { name, usage: d?.usage ?? `/${name}`, summary: d?.summary ?? '' };
      }),
    );
    this.commands = all;
  }

  /** Every name, sorted: what `/help` lists and Tab completes. */
  names(): string[] {
    return [...Object.keys(this.commands), ...Object.keys(LEAVING)].sort();
  }

  /** The usage and summary of one name (a command or /exit, /quit). */
  describe(name: string): Pick<SlashCommand, 'usage' | 'summary'> | undefined {
    return this.commands[name] ?? LEAVING[name];
  }

  async dispatch(c: SlashContext, name: string, args: readonly string[]): Promise<SlashOutcome> {
    if (name in LEAVING) return { kind: 'exit' };
    const cmd = this.commands[name];
    if (!cmd) return { kind: 'unknown', name, suggestion: nearest(name, this.names()) };
    return { kind: 'ran', name, result: await cmd.run(c, args) };
  }

  /** `/foo`'s answer: "unknown command /foo; did you mean /food? /help lists them". */
  static unknownText(o: { name: string; suggestion: string | undefined }): string {
    const mean = o.suggestion ? `; did you mean /${o.suggestion}?` : ';';
    return `unknown command /${o.name}${mean} /help lists them`;
  }

  /** Tab after `/`: the names that start with what is typed. */
  complete(line: string): [string[], string] {
    const typed = line.slice(1).toLowerCase();
    const hits = this.names()
      .filter((n) => n.startsWith(typed))
      .map((n) => `/${n}`);
    return [hits, line];
  }
}

interface HelpRow {
  name: string;
  usage: string;
  summary: string;
}

/** `/help`: every command of the dispatcher (read when it runs, so the table is complete). */
function helpCommand(rows: () => HelpRow[]): SlashCommand {
  return {
    usage: '/help',
    summary: 'list the chat commands',
    run: ({ ctx }) => {
      const { ui } = ctx;
      const all = rows();
      const width = Math.max(...all.map((r) => r.usage.length));
      const lines = all.map((r) =>
        ui.rich ? `  ${ui.pal.bold(r.usage.padEnd(width))}  ${r.summary}` : `${r.usage}\t${r.summary}`,
      );
      if (ui.rich)
        lines.push(
          '',
          ui.pal.dim(
            '  @path adds a file (or a folder listing) · a trailing \\ continues the line · // sends a literal /',
          ),
        );
      ui.out(`${lines.join('\n')}\n`);
      return Promise.resolve({ data: { commands: all } });
    },
  };
}

/** The closest name within two edits (a typo), if any. */
export function nearest(name: string, names: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const n of names) {
    const d = n.startsWith(name) && name.length > 0 ? 0.5 : distance(name, n);
    if (d <= 2 && (!best || d < best.d)) best = { name: n, d };
  }
  return best?.name;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(
        Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)),
      );
    prev = row;
  }
  return prev[b.length] ?? 0;
}
