/**
 * `agents serve …` without the client commands: the root command (global options, help text) and
 * `serve` alone. A local agent is spawned as `agents serve --stdio` for every client command, and
 * the command modules it would otherwise load (every schema of the protocol, the renderers) are
 * no part of serving. `agents serve --help` is the same text as through the whole tree.
 */
import type { Command } from 'commander';
import type { CliCommand } from './cli-command.ts';
import type { CliHost } from './index.ts';
import { registerServe, serveOptionsOf, type ServeOptions } from './commands/serve.command.ts';
import { ExitStatus, runProgram } from './exit-status.ts';
import { processIo, rootCommand } from './program.ts';
import type { CliIo } from './render/ui.ts';
import { addServerConfigOption, applyServerConfig, serveCommandOf } from './server-config.ts';

/** Runs `agents serve` with `argv` (as `process.argv`, its first argument `serve`) and returns the exit code. */
export function runServe(
  argv: string[],
  host: Pick<CliHost, 'version' | 'serve'>,
  io: CliIo = processIo(),
): Promise<number> {
  const status = new ExitStatus(io);
  const program = rootCommand(host.version, io);
  registerServeWithConfig(program, host.serve, status, io);
  return runProgram(program, status, argv);
}

/**
 * `agents serve` with `--config`: the file's settings are set on the commands before the options
 * are handed over (inside serve's own error handling, so a bad file is a start-up error, exit 2,
 * and nothing has opened yet).
 */
export function registerServeWithConfig(
  program: CliCommand,
  serve: (opts: ServeOptions) => Promise<number>,
  status: ExitStatus,
  io: CliIo,
): void {
  registerServe(program, () => serve(withServerConfig(program, io)), status);
  addServerConfigOption(program);
}

/** serve's options with the file's settings under the flags. */
function withServerConfig(program: Command, io: CliIo): ServeOptions {
  const serve = serveCommandOf(program);
  const warnings = applyServerConfig(serve, io.env);
  // One JSON object per line, as the server's own log (pino's fields): printed before the logger exists.
  for (const msg of warnings)
    io.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg })}\n`);
  return serveOptionsOf(serve.optsWithGlobals());
}
