import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { UsageError } from '../exit-codes.ts';
import type { Runner } from '../runner.ts';
import { PLAN_VIEW_CALLS } from '../../tui/plan-controller.ts';
import { SESSION_COMMAND_CALLS } from '../../tui/session-commands.ts';
import {
  cancelTask,
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  sessionList,
  sessionResume,
} from '../../../protocol/client/index.ts';

/** `agents tui`: the full-screen terminal UI (ink is loaded only when it runs). */
export function registerTui(program: CliCommand, runner: Runner): void {
  program
    .command('tui')
    .description('A full-screen terminal UI: sessions and chat with streamed answers and approvals, plans live')
    .option('--session <id>', 'open this session first (else the sessions list)')
    // The TUI's sessions list and chat, its chat commands (tui/session-commands.ts) and its plans views (tui/plan-controller.ts).
    .calls(
      sessionList,
      sessionCreate,
      sessionDelete,
      sessionResume,
      sendStreamingMessage,
      cancelTask,
      ...SESSION_COMMAND_CALLS,
      ...PLAN_VIEW_CALLS,
    )
    .action((opts: { session?: string }, cmd: Command) =>
      runner.run(cmd, 'tui', async (ctx) => {
        if (ctx.io.stdin.isTTY !== true || ctx.io.stdout.isTTY !== true)
          throw new UsageError(
            'agents tui needs a terminal',
            'use agents chat for pipes (it reads one message a line from stdin), or agents send "…"',
          );
        const { runTui } = await import('../../tui/index.tsx');
        const client = await ctx.client();
        const exit = await runTui(client, {
          io: ctx.io,
          target: ctx.target,
          color: ctx.ui.pal.enabled,
          signal: ctx.signal,
          session: opts.session,
        });
        return { data: { exit: exit.reason }, exit: exit.reason, ...(exit.error ? { error: exit.error } : {}) };
      }),
    );
}
