import { Argument, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from '../completion.ts';
import type { Runner } from '../runner.ts';

/** `agents completion bash|zsh|fish`: a completion script from the command tree (registered last, so it sees all of it). */
export function registerCompletion(program: CliCommand, runner: Runner): void {
  program
    .command('completion')
    .description('Print a shell completion script for agents (commands, subcommands, options) for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .addHelpText(
      'after',
      `
Install (then open a new shell):
  bash  agents completion bash \\
          > ~/.local/share/bash-completion/completions/agents
        (or add  source <(agents completion bash)  to ~/.bashrc)
  zsh   agents completion zsh > "\${fpath[1]}/_agents"
        (or add  source <(agents completion zsh)  to ~/.zshrc, after compinit)
  fish  agents completion fish > ~/.config/fish/completions/agents.fish
The script is made from this version's commands: generate it again after an
upgrade.`,
    )
    .action((shell: CompletionShell, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'completion', (ctx) => {
        const script = completionScript(shell, program);
        ctx.ui.out(script);
        return Promise.resolve({ data: { shell, script } });
      }),
    );
}
