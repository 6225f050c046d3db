/**
 * The examples `--help` shows for the commands people reach for first, by command path. Kept in
 * one table rather than beside each command so that the commands' own files stay about running
 * them; every line is an `agents …` command that the command-reference test parses against the
 * tree, so an example cannot name a command or flag that does not exist.
 */
import type { Command } from 'commander';
import { CliCommand } from './cli-command.ts';

const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  send: [
    'agents send "summarise README.md"',
    'agents send --actor local/gpt --project local/app "why does the build fail?"',
    'agents send --stream "explain the failing test in test/api.test.ts"',
  ],
  chat: ['agents chat', 'agents chat --resume', 'agents chat --actor local/gpt --project local/app'],
  session: ['agents session list', 'agents session show <id>', 'agents session undo <session>'],
  'plan use': [
    'agents plan use builtin/replace local/app --arg pattern=x --arg replacement=y',
    'agents plan use --goal "rename colour to color" local/app --actor local/gpt',
  ],
  'plan execute': ['agents plan execute <id>', 'agents plan execute <id> --yes --max-cost 0.50'],
  'plan apply': ['agents plan apply <id>', 'agents plan apply <id> --yes'],
  'actor add': ['agents actor add --config actor.yaml', 'agents actor show local/gpt'],
  completion: [
    'agents completion bash > ~/.local/share/bash-completion/completions/agents',
    'agents completion zsh > "${fpath[1]}/_agents"',
    'agents completion fish > ~/.config/fish/completions/agents.fish',
  ],
};

/** Gives each command of the table its examples (a path the tree lacks is an error: the table went stale). */
export function addExamples(program: Command): void {
  for (const [path, lines] of Object.entries(EXAMPLES)) {
    let cmd: Command | undefined = program;
    for (const word of path.split(' ')) cmd = cmd?.commands.find((c) => c.name() === word);
    if (!(cmd instanceof CliCommand)) throw new Error(`examples for a command that does not exist: agents ${path}`);
    cmd.examples(...lines);
  }
}
