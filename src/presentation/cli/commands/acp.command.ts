import type { Command } from 'commander';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { collect } from './session.command.ts';
import { messageOf } from '../../../protocol/client/index.ts';

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

export function registerAcp(program: Command, runner: Runner): void {
  program
    .command('acp')
    .description(
      'Serve the Agent Client Protocol on stdin/stdout for an editor (Zed, JetBrains, …); nothing else is written to stdout',
    )
    .option('--actor <name>', "new sessions' actor (default: the agent's default actor)")
    .option('--project <name>', 'new sessions work on this project (default: the project whose resource is the cwd)')
    .option('--skill <name>', "add this skill to new sessions' actor (repeatable)", collect)
    .action((opts: AcpOptions, cmd: Command) =>
      runner.run(cmd, 'acp', (ctx) => acp(ctx, opts, runner.version), { protocolStdout: true }),
    );
}
