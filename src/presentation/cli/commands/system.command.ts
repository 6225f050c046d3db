import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { diagnosticsRun, getExtendedAgentCard, healthCheck, type ResultOf } from '../../../protocol/client/index.ts';
import { readCard, renderCard } from '../render/card.render.ts';
import type { Palette } from '../render/colors.ts';
import { renderFields, renderTable, type Column } from '../render/table.ts';
import type { Ui } from '../render/ui.ts';
import type { Runner } from '../runner.ts';

type Check = ResultOf<typeof diagnosticsRun>['checks'][number];

const styleStatus = (s: string, pal: Palette): string =>
  s === 'ok' ? pal.green(s) : s === 'warn' || s === 'degraded' ? pal.yellow(s) : pal.red(s);

const CHECK_COLUMNS = (ui: Ui): Column<Check>[] => [
  { header: 'STATUS', value: (c) => c.status, style: (s, c) => (ui.rich ? styleStatus(c.status, ui.pal) : s) },
  { header: 'CATEGORY', value: (c) => c.category },
  { header: 'CHECK', value: (c) => c.name },
  {
    header: 'DETAIL',
    value: (c) => (ui.rich && c.hint && c.status !== 'ok' ? `${c.detail} — hint: ${c.hint}` : c.detail),
  },
  ...(ui.rich ? [] : [{ header: 'HINT', value: (c: Check) => c.hint ?? '' }]),
];

export function registerSystem(program: CliCommand, runner: Runner): void {
  registerCard(program, runner);
  registerHealth(program, runner);
  registerDiagnostics(program, runner);
}

function registerCard(program: CliCommand, runner: Runner): void {
  program
    .command('card')
    .description("Show the agent's Agent Card")
    .option('--extended', 'the authenticated extended card (GetExtendedAgentCard)')
    .calls(getExtendedAgentCard)
    .action((opts: { extended?: boolean }, cmd: Command) =>
      runner.run(cmd, 'card', async (ctx) => {
        const client = await ctx.client();
        const card = opts.extended
          ? await client.call(getExtendedAgentCard, {}, { signal: ctx.signal })
          : await client.agentCard();
        ctx.ui.out(renderCard(readCard(card), ctx.ui));
        return { data: { card } };
      }),
    );
}

function registerHealth(program: CliCommand, runner: Runner): void {
  program
    .command('health')
    .description('Is the agent alive and its storage reachable? (exit 1 when degraded)')
    .calls(healthCheck)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'health', async (ctx) => {
        const client = await ctx.client();
        const h = await client.call(healthCheck, {}, { signal: ctx.signal });
        const { ui } = ctx;
        const fields: Array<readonly [string, string]> = [
          ['version', h.version],
          ['uptime', `${h.uptimeSeconds}s`],
          ['storage', h.storage],
          ['live tasks', String(h.liveTasks)],
        ];
        if (ui.rich)
          ui.out(`${ui.pal.bold('Health')} ${styleStatus(h.status, ui.pal)}\n${renderFields(fields, ui.mode)}`);
        else
          ui.out(
            renderFields(
              [
                ['status', h.status],
                ['version', h.version],
                ['uptime-seconds', String(h.uptimeSeconds)],
                ['storage', h.storage],
                ['live-tasks', String(h.liveTasks)],
              ],
              ui.mode,
            ),
          );
        return { data: h, exit: h.status === 'ok' ? 'OK' : 'INTERNAL' };
      }),
    );
}

function registerDiagnostics(program: CliCommand, runner: Runner): void {
  program
    .command('diagnostics')
    .description('Check storage, disk, versions and configuration (exit 1 when a check fails)')
    .calls(diagnosticsRun)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'diagnostics', async (ctx) => {
        const client = await ctx.client();
        const d = await client.call(diagnosticsRun, {}, { signal: ctx.signal });
        const { ui } = ctx;
        ui.out(renderTable(d.checks, CHECK_COLUMNS(ui), ui.mode));
        const { ok, warn, fail } = d.summary;
        if (ui.rich)
          ui.out(
            `\n${styleStatus(d.status, ui.pal)} ${ui.pal.dim(`${ok} ok, ${warn} warning${warn === 1 ? '' : 's'}, ${fail} failed`)}\n`,
          );
        return { data: d, exit: d.checks.some((c) => c.status === 'fail') ? 'INTERNAL' : 'OK' };
      }),
    );
}
