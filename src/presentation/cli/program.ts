/**
 * The root of the `agents` command tree — its global options and help text — shared by the whole
 * CLI and by `agents --help`, which lists the commands from COMMAND_INDEX without loading them.
 */
import { Option, type Command } from 'commander';
import { CliCommand } from './cli-command.ts';
import { quietOnClosedPipes } from './closed-pipe.ts';
import { OUTPUT_FORMATS } from './render/format.ts';
import type { CliIo } from './render/ui.ts';

/**
 * The global options, compactly, for the end of a subcommand's help: its own usage, options and
 * examples come first; `agents --help` describes these in full.
 */
export function globalOptionsText(root: Command, width = 80): string {
  const flags = root.options.map((o) => o.flags.replace(/^-V, /, '-V/'));
  const lines = ['Global options (described in agents --help):'];
  let line = ' ';
  for (const f of flags) {
    const next = `${line} ${f}${f === flags.at(-1) ? '' : ','}`;
    if (next.length > width && line.trim()) {
      lines.push(line);
      line = `  ${f}${f === flags.at(-1) ? '' : ','}`;
    } else line = next;
  }
  lines.push(line);
  return `\n${lines.join('\n')}\n`;
}

/** The `agents` command with its global options, before any subcommand is added. */
export function rootCommand(version: string, io: CliIo): CliCommand {
  const root: CliCommand = new CliCommand('agents')
    .description(
      'CleverAgents: talk to an agent over A2A — a local one (spawned over stdio) or a server (--server URL)',
    )
    .version(version, '-V, --version', 'print the version')
    .addOption(
      new Option(
        '--format <format>',
        'output format: rich (default on a terminal), plain (default otherwise), json or yaml',
      ).choices(OUTPUT_FORMATS),
    )
    .option('--no-color', 'no colours in rich output (NO_COLOR works too)')
    .option('--server <url>', 'use the agent server at this URL (env CLEVERAGENTS_SERVER_URL, config `server`)')
    .option('--local', 'use a local agent even when a server is configured')
    .option(
      '--token <token>',
      'server bearer token (env CLEVERAGENTS_SERVER_TOKEN, config `token`); for serve, the token to require',
    )
    .option(
      '--tenant <namespace>',
      'the namespace commands act in, sent as the A2A tenant (env CLEVERAGENTS_NAMESPACE, config `namespace`); default: your own',
    )
    .option('--data-dir <dir>', "the local agent's state directory (env CLEVERAGENTS_DATA_DIR)")
    .option('--verbose', "show the local agent's log on stderr")
    // Inherited by every subcommand: its help lists its own options, the global ones come compactly at the end.
    // minWidthToWrap: a command with long argument lists (plan, namespace) leaves its descriptions
    // under commander's default 40 columns at 80, and commander then stops wrapping at all.
    .configureHelp({ showGlobalOptions: false, sortSubcommands: false, minWidthToWrap: 24 })
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
Config file: $XDG_CONFIG_HOME/cleveragents/config.yaml (keys: server, token,
namespace, format, defaultActor, defaultProject; see: agents config list);
flags beat env beat config.

Exit codes: 0 ok, 1 internal error / unhealthy, 2 usage, 3 not found,
4 authentication, 5 invalid state, 6 agent unreachable, 7 invalid params,
8 version not supported, 9 task failed/rejected/canceled, 10 plan error (e.g. a
conflict at apply), 11 budget exceeded, 130 Ctrl-C.`,
    )
    .exitOverride();
  root.addHelpText('afterAll', ({ command }) => (command === root ? '' : globalOptionsText(root)));
  return root;
}

/** The process's own streams and environment. */
export function processIo(): CliIo {
  quietOnClosedPipes();
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}
