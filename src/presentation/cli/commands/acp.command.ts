import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { collect } from './session.command.ts';
import { CHAT_COMMAND_CALLS } from '../../acp/chat-commands.ts';
import {
  messageOf,
  REGISTRIES,
  cancelTask,
  getTask,
  planApply,
  planApprove,
  planCancel,
  planDiff,
  planExecute,
  planReject,
  planStatus,
  planTree,
  planUse,
  sendMessage,
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  sessionList,
  sessionShow,
  subscribeToTask,
} from '../../../protocol/client/index.ts';

interface AcpOptions {
  actor?: string;
  project?: string;
  skill?: string[];
}

/**
 * An Agent Client Protocol agent on stdin/stdout for editors; the backend is this command's client
 * (the local agent, or --server). It ends when the editor closes stdin.
 */
async function acp(ctx: RunContext, opts: AcpOptions, version: string): Promise<Outcome> {
  // The SDK is loaded only when an editor starts the bridge, not by every `agents` command.
  const { runAcp } = await import('../../acp/index.ts');
  const log = (line: string): void => void ctx.io.stderr.write(`agents acp: ${line}\n`);
  // The backend starts while the editor initializes; a failure is reported to the request that needs it.
  const backend = ctx.client();
  backend.catch((err: unknown) => log(`the backend could not be reached: ${messageOf(err)}`));
  await runAcp(
    ctx.io,
    {
      connect: () => backend,
      version,
      target: ctx.target,
      defaults: {
        ...(opts.actor ? { actor: opts.actor } : {}),
        ...(opts.project ? { project: opts.project } : {}),
        ...(opts.skill?.length ? { skill: opts.skill } : {}),
      },
      log,
    },
    ctx.signal,
  );
  return { data: {} };
}

export function registerAcp(program: CliCommand, runner: Runner): void {
  program
    .command('acp')
    .description(
      'Serve the Agent Client Protocol on stdin/stdout for an editor (Zed, JetBrains, …); nothing else is written to stdout',
    )
    .option('--actor <name>', "new sessions' actor (default: the agent's default actor)")
    .option('--project <name>', 'new sessions work on this project (default: the project whose resource is the cwd)')
    .option('--skill <name>', "add this skill to new sessions' actor (repeatable)", collect)
    // The ACP bridge: a session per ACP session (its project found from the editor's cwd; listed, loaded and
    // deleted), turns streamed (or sent, to a backend that does not stream), approvals answered on the task, cancels;
    // its slash commands run plans (from a goal, executed, diffed, applied, cancelled), following their tasks,
    // and the chat's commands on the session (acp/chat-commands.ts).
    .calls(
      sessionCreate,
      sessionShow,
      sessionList,
      sessionDelete,
      sendStreamingMessage,
      sendMessage,
      cancelTask,
      REGISTRIES.project.list,
      REGISTRIES.resource.list,
      planUse,
      planExecute,
      planDiff,
      planApply,
      planApprove,
      planReject,
      planCancel,
      planStatus,
      planTree,
      subscribeToTask,
      getTask,
      ...CHAT_COMMAND_CALLS,
    )
    .action((opts: AcpOptions, cmd: Command) =>
      runner.run(cmd, 'acp', (ctx) => acp(ctx, opts, runner.version), { protocolStdout: true }),
    );
}
