/** The questions `agents init` asks on a terminal: numbered choices and short answers, over readline. */
import { createInterface, type Interface } from 'node:readline/promises';
import { UsageError } from '../exit-codes.ts';
import type { RunContext } from '../runner.ts';

export interface Prompter {
  /** Picks one of `choices` by number (Enter: the first); asks again after a wrong answer. */
  choose(question: string, choices: readonly string[]): Promise<number>;
  /** A line of text; Enter gives `fallback` (a required answer without one asks again). */
  ask(question: string, fallback?: string): Promise<string>;
  /** Yes or no; Enter gives `fallback`. */
  confirm(question: string, fallback: boolean): Promise<boolean>;
  close(): void;
}

/** A prompter on the command's terminal; Ctrl-C interrupts the command as it does elsewhere. */
export function terminalPrompter(ctx: RunContext): Prompter {
  const rl: Interface = createInterface({ input: ctx.io.stdin, output: ctx.io.stdout, terminal: true });
  rl.on('SIGINT', () => {
    ctx.interrupt();
    rl.close();
  });
  const out = (s: string): void => void ctx.io.stdout.write(s);
  const line = async (q: string): Promise<string> => {
    try {
      return (await rl.question(q, { signal: ctx.signal })).trim();
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      // The input ended (Ctrl-D): nothing more can be asked.
      throw new UsageError(
        'the input ended before init had its answers',
        'run agents init again, or give --yes with flags',
      );
    }
  };
  return {
    async choose(question, choices) {
      out(`${question}\n`);
      choices.forEach((c, i) => out(`  ${i + 1}) ${c}\n`));
      for (;;) {
        const a = await line(`Choose 1-${choices.length} [1]: `);
        if (a === '') return 0;
        const n = Number(a);
        if (Number.isInteger(n) && n >= 1 && n <= choices.length) return n - 1;
        out(`  answer a number from 1 to ${choices.length}\n`);
      }
    },
    async ask(question, fallback) {
      for (;;) {
        const a = await line(`${question}${fallback ? ` [${fallback}]` : ''}: `);
        if (a !== '') return a;
        if (fallback !== undefined) return fallback;
        out('  an answer is needed\n');
      }
    },
    async confirm(question, fallback) {
      for (;;) {
        const a = (await line(`${question} [${fallback ? 'Y/n' : 'y/N'}]: `)).toLowerCase();
        if (a === '') return fallback;
        if (a === 'y' || a === 'yes') return true;
        if (a === 'n' || a === 'no') return false;
        out('  answer y or n\n');
      }
    },
    close: () => rl.close(),
  };
}
