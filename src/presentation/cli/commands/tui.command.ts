import type { Command } from 'commander';
import { UsageError } from '../exit-codes.ts';
import type { Runner } from '../runner.ts';

/**
 * The TUI's module. ink draws nothing until exit when it believes it runs in CI (`is-in-ci` reads
 * CI and CONTINUOUS_INTEGRATION once, as ink is imported); on a terminal the TUI is interactive
 * whatever those say (a developer's shell, a CI job's tmux), so they are hidden from that import.
 */
async function loadTui(): Promise<typeof import('../../tui/index.tsx')> {
  const saved = { CI: process.env['CI'], CONTINUOUS_INTEGRATION: process.env['CONTINUOUS_INTEGRATION'] };
  delete process.env['CI'];
  delete process.env['CONTINUOUS_INTEGRATION'];
  try {
    return await import('../../tui/index.tsx');
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
  }
}

/** `agents tui`: the full-screen terminal UI (ink is loaded only when it runs). */
export function registerTui(program: Command, runner: Runner): void {
  program
    .command('tui')
    .description('A full-screen terminal UI: sessions and chat with streamed answers and approvals, plans live')
    .option('--session <id>', 'open this session first (else the sessions list)')
    .action((opts: { session?: string }, cmd: Command) =>
      runner.run(cmd, 'tui', async (ctx) => {
        if (ctx.io.stdin.isTTY !== true || ctx.io.stdout.isTTY !== true)
          throw new UsageError(
            'agents tui needs a terminal',
            'use agents chat for pipes (it reads one message a line from stdin), or agents send "…"',
          );
        const { runTui } = await loadTui();
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
