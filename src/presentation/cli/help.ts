/**
 * `agents --help` without loading the command modules (they pull in every schema of the protocol):
 * the root command of the full CLI, with one stub per command of COMMAND_INDEX. A stub has what the
 * command list shows — name, alias, whether it takes options, arguments, description — so commander
 * renders the same text as for the full tree (a unit test compares the two).
 */
import { CommanderError, type Command } from 'commander';
import { COMMAND_INDEX } from './command-index.ts';
import { processIo, rootCommand } from './program.ts';
import type { CliIo } from './render/ui.ts';

/** The root command with a stub per command: enough for its help, nothing to run. */
export function helpProgram(version: string, io: CliIo): Command {
  const program = rootCommand(version, io);
  for (const c of COMMAND_INDEX) {
    const stub = program.command(c.name).description(c.description).aliases(c.aliases);
    for (const a of c.args) stub.argument(a);
    // Only counted: the list shows `[options]` for a command that has any.
    if (c.options) stub.option('--stub');
  }
  return program;
}

/** Prints the top-level help of `agents` and returns the exit code (0), as `agents --help` does. */
export function printHelp(version: string, io: CliIo = processIo()): number {
  const program = helpProgram(version, io);
  try {
    program.parse(['--help'], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError) || err.exitCode !== 0) throw err;
  }
  return 0;
}
