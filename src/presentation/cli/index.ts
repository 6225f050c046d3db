/**
 * The `agents` command line: a thin renderer over the A2A client. Every command is one or a few
 * A2A calls to a local agent (spawned over stdio) or a server (`--server`); `serve` is handed to
 * the composition root.
 */
import type { Command } from 'commander';
import { registerAccount } from './commands/account.command.ts';
import { registerAcp } from './commands/acp.command.ts';
import { registerAction } from './commands/action.command.ts';
import { registerAutomationProfile } from './commands/automation-profile.command.ts';
import { registerActor } from './commands/actor.command.ts';
import { registerChat } from './commands/chat.command.ts';
import { registerCompletion } from './commands/completion.command.ts';
import { addExamples } from './command-examples.ts';
import { registerConfig } from './commands/config.command.ts';
import { registerInit } from './commands/init.command.ts';
import { registerDemo } from './commands/demo.command.ts';
import { registerHook } from './commands/hook.command.ts';
import { registerNamespace } from './commands/namespace.command.ts';
import { registerPlan } from './commands/plan.command.ts';
import { registerProject } from './commands/project.command.ts';
import { registerResource } from './commands/resource.command.ts';
import { registerSecret } from './commands/secret.command.ts';
import { registerSend } from './commands/send.command.ts';
import type { ServeOptions } from './commands/serve.command.ts';
import type { ServerMaintenance } from './commands/server-admin.command.ts';
import { registerSession } from './commands/session.command.ts';
import { registerSkill } from './commands/skill.command.ts';
import { registerSync, registerServer } from './commands/sync.command.ts';
import { registerSystem } from './commands/system.command.ts';
import { registerTask } from './commands/task.command.ts';
import { registerTool } from './commands/tool.command.ts';
import { registerTui } from './commands/tui.command.ts';
import type { EarlyAgent } from './early-agent.ts';
import { runProgram } from './exit-status.ts';
import type { CliIo } from './render/ui.ts';
import { processIo, rootCommand } from './program.ts';
import { Runner } from './runner.ts';
import { registerServeWithConfig } from './server-config.ts';

export type { ServeOptions } from './commands/serve.command.ts';
export type {
  BackupReport,
  MaintenanceTarget,
  MigrationState,
  RestoreReport,
  ServerMaintenance,
} from './commands/server-admin.command.ts';
export type { CliIo } from './render/ui.ts';
export { EXIT_CODES, UsageError, type ExitReason } from './exit-codes.ts';

/** What the composition root gives the CLI: its version, and the server to run for `agents serve`. */
export interface CliHost {
  version: string;
  /** The `agents` script to spawn a local agent from: the running one (bundled or not). */
  bin?: string;
  /** The local agent spawned before the CLI loaded (presentation/cli/early-agent.ts); ended if unused. */
  early?: EarlyAgent;
  serve(opts: ServeOptions): Promise<number>;
  /** `agents server migrate|backup|restore`: the composition root's direct access to a server's database. */
  maintenance?: () => Promise<ServerMaintenance>;
}

/** Runs `agents` with `argv` (as `process.argv`: node, script, arguments…) and returns the exit code. */
export async function runCli(argv: string[], host: CliHost, io: CliIo = processIo()): Promise<number> {
  const runner = new Runner(host.version, io, host.bin, host.early);
  try {
    return await runProgram(buildProgram(host, runner, io), runner, argv);
  } finally {
    host.early?.dispose();
  }
}

/** The whole command tree (exported for the test that checks every command against the method table). */
export function buildProgram(
  host: CliHost,
  runner: Runner = new Runner(host.version, processIo(), host.bin),
  io: CliIo = processIo(),
): Command {
  const program = rootCommand(host.version, io);

  registerInit(program, runner);
  registerSend(program, runner);
  registerChat(program, runner);
  registerTui(program, runner);
  registerConfig(program, runner);
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
  registerServer(program, runner, host.maintenance);
  registerSystem(program, runner);
  registerAccount(program, runner);
  registerAcp(program, runner);
  registerServeWithConfig(program, (opts) => host.serve(opts), runner, io);
  registerCompletion(program, runner);
  addExamples(program);
  return program;
}
