import { InvalidArgumentError, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  LIMIT_MAX as MAX_LIMIT,
  namespaceLimitsGet,
  namespaceLimitsSet,
  type ResultOf,
} from '../../../protocol/client/index.ts';
import { renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';

type LimitsView = ResultOf<typeof namespaceLimitsGet>;
type LimitKey = keyof LimitsView['limits'];

/**
 * A limit's value on the command line: a whole number (0: no limit), or `default` (the server's).
 * Kept as the word here: commander treats a parser's null as "no value".
 */
function limitArg(value: string): number | 'default' {
  const v = value.trim();
  if (v === 'default') return v;
  if (!/^\d+$/.test(v) || Number(v) > MAX_LIMIT)
    throw new InvalidArgumentError(`must be a whole number from 0 (no limit) to ${MAX_LIMIT}, or "default"`);
  return Number(v);
}

const ROWS: ReadonlyArray<{ key: LimitKey; name: string; flag: string }> = [
  { key: 'requestsPerMinute', name: 'requests per minute', flag: '--rpm' },
  { key: 'concurrentTurns', name: 'concurrent turns', flag: '--concurrent-turns' },
  { key: 'tokensPerDay', name: 'tokens per day', flag: '--tokens-per-day' },
];

interface LimitFlags {
  rpm?: number | 'default';
  concurrentTurns?: number | 'default';
  tokensPerDay?: number | 'default';
}

/** A flag as the method takes it: null returns the limit to the server's default. */
const valueOf = (v: number | 'default'): number | null => (v === 'default' ? null : v);

/**
 * `agents namespace limits <namespace> [--rpm N] [--concurrent-turns N] [--tokens-per-day N]`: each
 * user's limits while acting in a namespace; without a flag it shows them. Administrators only.
 */
export function registerNamespaceLimits(ns: CliCommand, runner: Runner): void {
  ns.command('limits')
    .description(
      "Show or set a namespace's per-user limits: requests per minute, concurrent turns, tokens per day (server administrators; audited)",
    )
    .argument('<namespace>', 'the namespace')
    .option('--rpm <n>', 'requests per minute per user (0: no limit; "default": the server\'s)', limitArg)
    .option('--concurrent-turns <n>', 'turns a user may have running at once (0: no limit; "default")', limitArg)
    .option(
      '--tokens-per-day <n>',
      'model tokens a user\'s turns may use per UTC day (0: no limit; "default")',
      limitArg,
    )
    .calls(namespaceLimitsGet, namespaceLimitsSet)
    .action((namespace: string, opts: LimitFlags, cmd: Command) =>
      runner.run(cmd, 'namespace limits', async (ctx) => {
        const client = await ctx.client();
        const changes = {
          ...(opts.rpm !== undefined ? { requestsPerMinute: valueOf(opts.rpm) } : {}),
          ...(opts.concurrentTurns !== undefined ? { concurrentTurns: valueOf(opts.concurrentTurns) } : {}),
          ...(opts.tokensPerDay !== undefined ? { tokensPerDay: valueOf(opts.tokensPerDay) } : {}),
        };
        const set = Object.keys(changes).length > 0;
        const r = set
          ? await client.call(namespaceLimitsSet, { namespace, ...changes }, { signal: ctx.signal })
          : await client.call(namespaceLimitsGet, { namespace }, { signal: ctx.signal });
        const { ui } = ctx;
        if (set && ui.rich) ui.info(`Set the limits of ${r.namespace}`);
        ui.out(
          renderTable(
            ROWS,
            [
              { header: 'LIMIT', value: (row) => row.name, style: (s) => ui.pal.bold(s) },
              { header: 'IN FORCE', value: (row) => amount(r.limits[row.key]) },
              {
                header: 'SET BY',
                value: (row) => (r.overrides[row.key] !== undefined ? `namespace (${row.flag})` : 'server default'),
              },
            ],
            ui.mode,
          ),
        );
        return { data: r };
      }),
    );
}

const amount = (n: number): string => (n === 0 ? 'no limit' : String(n));
