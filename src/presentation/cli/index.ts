/**
 * The `agents` command line: a thin renderer over the A2A client. Every command is one or a few
 * A2A calls to a local agent (spawned over stdio) or a server (`--server`); `serve` is handed to
 * the composition root.
 */
import type { Command } from 'commander';
import { registerAccount } from './commands/account.command.js';
import { registerAcp } from './commands/acp.command.js';
import { registerAction } from './commands/action.command.js';
import { registerAutomationProfile } from './commands/automation-profile.command.js';
import { registerActor } from './commands/actor.command.js';
import { registerChat } from './commands/chat.command.js';
import { registerDemo } from './commands/demo.command.js';
import { registerHook } from './commands/hook.command.js';
import { registerNamespace } from './commands/namespace.command.js';
import { registerPlan } from './commands/plan.command.js';
import { registerProject } from './commands/project.command.js';
import { registerResource } from './commands/resource.command.js';
import { registerSecret } from './commands/secret.command.js';
import { registerSend } from './commands/send.command.js';
import { registerServe, type ServeOptions } from './commands/serve.command.js';
import { registerSession } from './commands/session.command.js';
import { registerSkill } from './commands/skill.command.js';
import { registerSync, registerServer } from './commands/sync.command.js';
import { registerSystem } from './commands/system.command.js';
import { registerTask } from './commands/task.command.js';
import { registerTool } from './commands/tool.command.js';
import { registerTui } from './commands/tui.command.js';
import { COMMAND_METHODS } from './command-methods.js';
import type { EarlyAgent } from './early-agent.js';
import { runProgram } from './exit-status.js';
import type { CliIo } from './render/ui.js';
import { processIo, rootCommand } from './program.js';
import { Runner } from './runner.js';

export type { ServeOptions } from './commands/serve.command.js';
export type { CliIo } from './render/ui.js';
export { EXIT_CODES, UsageError, type ExitReason } from './exit-codes.js';

/** What the composition root gives the CLI: its version, and the server to run for `agents serve`. */
export interface CliHost {
  version: string;
  /** The `agents` script to spawn a local agent from: the running one (bundled or not). */
  bin?: string;
  /** The local agent spawned before the CLI loaded (presentation/cli/early-agent.ts); ended if unused. */
  early?: EarlyAgent;
  serve(opts: ServeOptions): Promise<number>;
}

/** Runs `agents` with `argv` (as `process.argv`: node, script, arguments…) and returns the exit code. */
export async function runCli(argv: string[], host: CliHost, io: CliIo = processIo()): Promise<number> {
  const runner = new Runner(host.version, io, COMMAND_METHODS, host.bin, host.early);
  try {
    return await runProgram(buildProgram(host, runner, io), runner, argv);
  } finally {
    host.early?.dispose();
  }
}

/** The whole command tree (exported for the test that checks every command against the method table). */
export function buildProgram(
  host: CliHost,
  runner: Runner = new Runner(host.version, processIo(), COMMAND_METHODS, host.bin),
  io: CliIo = processIo(),
): Command {
  const program = rootCommand(host.version, io);

  registerSend(program, runner);
  registerChat(program, runner);
  registerTui(program, runner);
  registerSession(program, runner);
  registerTask(program, runner);
  registerPlan(program, runner);
  registerDemo(program, runner);
  registerActor(program, runner);
  registerTool(program, runner);
  registerSkill(program, runner);
  registerResource(program, runner);
  registerProject(program, runner);
  registerAction(program, runner);
  registerAutomationProfile(program, runner);
  registerHook(program, runner);
  registerNamespace(program, runner);
  registerSecret(program, runner);
  registerSync(program, runner);
  registerServer(program, runner);
  registerSystem(program, runner);
  registerAccount(program, runner);
  registerAcp(program, runner);
  registerServe(program, (opts) => host.serve(opts), runner);
  return program;
}
