/** What `agents --help` lists of each command (COMMAND_INDEX), read from the full command tree. */
import { Help, type Argument, type Command } from 'commander';
import type { CommandStub } from '../../src/presentation/cli/command-index.ts';

/** An argument as commander shows it (`<text...>`, `[id]`); `.argument()` parses it back. */
const argTerm = (a: Argument): string => {
  const n = `${a.name()}${a.variadic ? '...' : ''}`;
  return a.required ? `<${n}>` : `[${n}]`;
};

export function commandIndex(program: Command): CommandStub[] {
  const help = new Help();
  return program.commands
    .filter((c) => !(c as unknown as { _hidden: boolean })._hidden)
    .map((c) => ({
      name: c.name(),
      aliases: c.aliases(),
      options: c.options.length > 0,
      args: c.registeredArguments.map(argTerm),
      description: help.subcommandDescription(c),
    }));
}
