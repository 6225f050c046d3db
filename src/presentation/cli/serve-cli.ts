/**
 * `agents serve …` without the client commands: the root command (global options, help text) and
 * `serve` alone. A local agent is spawned as `agents serve --stdio` for every client command, and
 * the command modules it would otherwise load (every schema of the protocol, the renderers) are
 * no part of serving. `agents serve --help` is the same text as through the whole tree.
 */
import type { CliHost } from './index.ts';
import { ExitStatus, runProgram } from './exit-status.ts';
import { processIo, rootCommand } from './program.ts';
import type { CliIo } from './render/ui.ts';
import { registerServeWithConfig } from './server-config.ts';

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
