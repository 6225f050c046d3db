import { Command } from 'commander';

/**
 * A command of the `agents` tree that declares, where it is registered, the methods it calls:
 * `.calls(planUse, ...PHASE_CALLS)` beside the `.action` that makes the calls. Its client refuses
 * any other method (declared-client.ts); COMMAND_METHODS is read from the tree (command-methods.ts).
 */
export class CliCommand extends Command {
  #calls: readonly string[] = [];
  #examples: readonly string[] = [];

  /** Every subcommand is a CliCommand too, so each can declare its calls. */
  override createCommand(name?: string): CliCommand {
    return new CliCommand(name);
  }

  /** Declares the methods (contract rows) this command calls; each is named once. */
  calls(...rows: ReadonlyArray<{ name: string }>): this {
    this.#calls = [...new Set(rows.map((r) => r.name))];
    return this;
  }

  /** The wire names this command declared (none for a command that calls nothing). */
  get declaredCalls(): readonly string[] {
    return this.#calls;
  }

  /**
   * Two or three command lines (`agents …`, each one that parses against the tree: the
   * command-reference test reads them) that `--help` shows after the command's own options.
   */
  examples(...lines: readonly string[]): this {
    if (this.#examples.length === 0)
      this.addHelpText('after', () => `\nExamples:\n${this.#examples.map((l) => `  ${l}`).join('\n')}`);
    this.#examples = [...this.#examples, ...lines];
    return this;
  }

  /** The examples `--help` shows. */
  get exampleLines(): readonly string[] {
    return this.#examples;
  }
}

/** The methods a command declared, for the runner to hand its client (a plain Command declares none). */
export const declaredCallsOf = (cmd: Command): readonly string[] =>
  cmd instanceof CliCommand ? cmd.declaredCalls : [];
