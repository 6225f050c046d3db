import type { Command } from 'commander';
import { diagnosticsRun, getExtendedAgentCard, healthCheck, type ResultOf } from '../../../protocol/client/index.js';
import { CliError } from '../exit-codes.js';
import type { Palette } from '../render/colors.js';
import { renderFields, renderTable, type Column } from '../render/table.js';
import type { Ui } from '../render/ui.js';
import type { Runner } from '../runner.js';

type Check = ResultOf<typeof diagnosticsRun>['checks'][number];

const styleStatus = (s: string, pal: Palette): string =>
  s === 'ok' ? pal.green(s) : s === 'warn' || s === 'degraded' ? pal.yellow(s) : pal.red(s);

type AgentCard = ResultOf<typeof getExtendedAgentCard>;

/** The card as the card contract types it; a card without that shape is the agent's error, not ours. */
function readCard(raw: unknown): AgentCard {
  const r = getExtendedAgentCard.result.safeParse(raw);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(card)'}: ${i.message}`).join('; ');
  throw new CliError(`The agent's card is not an A2A Agent Card: ${problems}`, 'INTERNAL', 'InvalidAgentCard');
}

function renderCard(card: AgentCard, ui: Ui): string {
  const caps = card.capabilities;
  const capNames = Object.entries(caps)
    .filter(([, v]) => v === true)
    .map(([k]) => k);
  const extensions = (caps.extensions ?? []).map((e) => e.uri);
  const interfaces = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`.trim());
  const skills = card.skills.map((s) => s.id);
  const fields: Array<readonly [string, string | undefined]> = [
    ['version', card.version],
    ['description', card.description],
    ['provider', card.provider?.organization],
    ['capabilities', capNames.join(', ')],
    ['extensions', extensions.join(', ')],
    ['interfaces', interfaces.join(ui.rich ? '\n' : ', ')],
    ['skills', skills.join(', ')],
  ];
  if (!ui.rich) return renderFields([['name', card.name], ...fields], ui.mode);
  return `${ui.pal.bold(card.name)}\n${renderFields(fields, ui.mode)}`;
}

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

export function registerSystem(program: Command, runner: Runner): void {
  program
    .command('card')
    .description("Show the agent's Agent Card")
    .option('--extended', 'the authenticated extended card (GetExtendedAgentCard)')
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

  program
    .command('health')
    .description('Is the agent alive and its storage reachable? (exit 1 when degraded)')
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

  program
    .command('diagnostics')
    .description('Check storage, disk, versions and configuration (exit 1 when a check fails)')
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
