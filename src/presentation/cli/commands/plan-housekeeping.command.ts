import { InvalidArgumentError, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { PLAN_REF_CALLS, PLAN_REF_HELP, planRef } from '../support/refs.ts';
import { planDelete, planPrune, planRebase } from '../../../protocol/client/index.ts';
import { whenText } from '../render/definition.render.ts';
import { phaseState } from '../render/plan.render.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';
import { durationOption } from '../support/options.ts';

const STATES = ['queued', 'processing', 'complete', 'errored', 'constrained', 'cancelled', 'applied'] as const;
type State = (typeof STATES)[number];

/** `--state applied,cancelled` into a list of plan states. */
function statesOption(value: string): State[] {
  const out = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = out.filter((s) => !(STATES as readonly string[]).includes(s));
  if (out.length === 0 || bad.length > 0)
    throw new InvalidArgumentError(`must be states separated by commas, of: ${STATES.join(', ')}`);
  return out as State[];
}

const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`;

/** `agents plan rebase|delete|prune`: a moved base, and plans' sandboxes and branches cleaned up. */
export function registerPlanHousekeeping(plan: CliCommand, runner: Runner): void {
  registerPlanRebase(plan, runner);
  registerPlanDelete(plan, runner);
  registerPlanPrune(plan, runner);
}

function registerPlanRebase(plan: CliCommand, runner: Runner): void {
  plan
    .command('rebase')
    .description(
      "Bring the plan's sandbox onto the current head of the branch it targets (after that branch moved); a conflict leaves the files with conflict markers in the sandbox",
    )
    .argument('<id>', PLAN_REF_HELP)
    .option('--continue', 'after resolving the conflicts by hand in the sandbox: check no markers remain, and go on')
    .calls(planRebase, ...PLAN_REF_CALLS)
    .action((id: string, opts: { continue?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan rebase', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const r = await client.call(
          planRebase,
          { planId, ...(opts.continue ? { continue: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const short = (c: string): string => c.slice(0, 12);
        const lines = r.sandboxes.map(
          (s) =>
            [
              s.resource,
              s.outcome === 'up-to-date'
                ? `already on ${s.targetBranch ?? 'its target'} ${short(s.onto)}`
                : s.outcome === 'resolved'
                  ? `conflicts resolved (${s.files.join(', ') || 'no files'}) on ${s.targetBranch ?? 'its target'} ${short(s.onto)}`
                  : `rebased onto ${s.targetBranch ?? 'its target'} ${short(s.onto)} (from ${short(s.from)}; ${plural(s.files.length, 'changed file')})`,
            ] as const,
        );
        const next = `agents plan diff ${r.planId} ; agents plan apply ${r.planId}`;
        if (ui.rich) {
          const head =
            r.outcome === 'up-to-date' ? 'is up to date' : r.outcome === 'resolved' ? 'conflicts resolved' : 'rebased';
          ui.out(`Plan ${r.planId} ${head} ${phaseState(r.plan, ui.pal)}\n${renderFields(lines, ui.mode)}`);
          ui.info(`next: ${next}`);
        } else
          ui.out(
            renderFields(
              [
                ['plan', r.planId],
                ['outcome', r.outcome],
                ['phase', r.plan.phase],
                ['state', r.plan.state],
                ...lines,
                ['checkpoint', r.checkpointId],
                ['next', next],
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerPlanDelete(plan: CliCommand, runner: Runner): void {
  plan
    .command('delete')
    .description('Delete a plan with its sandboxes and branches (refused for changes never applied, unless --force)')
    .argument('<id>', PLAN_REF_HELP)
    .option('--force', 'delete even the changes that were never applied')
    .calls(planDelete, ...PLAN_REF_CALLS)
    .action((id: string, opts: { force?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan delete', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const r = await client.call(
          planDelete,
          { planId, ...(opts.force ? { force: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const removed = r.sandboxes.map(
          (s) => ['removed', `${s.root}${s.branch ? ` (branch ${s.branch})` : ''}`] as const,
        );
        const lost = r.discarded
          ? `${plural(r.discarded.files, 'file')} (+${r.discarded.additions} -${r.discarded.deletions}) never applied`
          : undefined;
        if (ui.rich) ui.out(`Deleted plan ${r.planId}\n${renderFields([...removed, ['discarded', lost]], ui.mode)}`);
        else ui.out(renderFields([['plan', r.planId], ['deleted', 'yes'], ...removed, ['discarded', lost]], ui.mode));
        return { data: r };
      }),
    );
}

function registerPlanPrune(plan: CliCommand, runner: Runner): void {
  plan
    .command('prune')
    .description(
      'Delete your finished plans with their sandboxes and branches: by default applied and cancelled plans not updated for 7 days (never changes that were not applied, unless --force)',
    )
    .option(
      '--older-than <duration>',
      'only plans not updated for this long: 30m, 12h, 7d (default 7d)',
      durationOption,
    )
    .option('--state <states>', 'only plans in these states, comma-separated (default applied,cancelled)', statesOption)
    .option('--force', 'also delete plans with changes that were never applied')
    .option('--dry-run', 'only show what would be deleted')
    .calls(planPrune)
    .action((opts: { olderThan?: number; state?: State[]; force?: boolean; dryRun?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan prune', async (ctx) => {
        const client = await ctx.client();
        const params = {
          ...(opts.olderThan !== undefined ? { olderThanSeconds: opts.olderThan } : {}),
          ...(opts.state ? { states: opts.state } : {}),
          ...(opts.force ? { force: true } : {}),
          ...(opts.dryRun ? { dryRun: true } : {}),
        };
        const r = await client.call(planPrune, params, { signal: ctx.signal });
        const { ui } = ctx;
        const verb = r.dryRun ? 'would delete' : 'deleted';
        const rows = [
          ...r.removed.map((p) => ({
            ...p,
            what: verb,
            why: `${p.sandboxes.length} sandbox${p.sandboxes.length === 1 ? '' : 'es'}`,
          })),
          ...r.kept.map((p) => ({ ...p, what: 'kept', why: p.reason })),
        ];
        if (rows.length === 0)
          ui.done(
            `nothing to ${r.dryRun ? 'prune (dry run)' : 'prune'}: no ${r.states.join(' or ')} plans older than the limit`,
          );
        else
          ui.out(
            renderTable(
              rows,
              [
                { header: 'ID', value: (p) => p.planId },
                { header: 'RESULT', value: (p) => p.what },
                {
                  header: 'PHASE/STATE',
                  value: (p) => `${p.phase}/${p.state}`,
                  style: (_s, p) => phaseState(p, ui.pal),
                },
                { header: 'UPDATED', value: (p) => whenText(p.updatedAt, ui.rich) },
                { header: 'WHY', value: (p) => p.why },
                { header: 'NAME', value: (p) => p.name },
              ],
              ui.mode,
            ),
          );
        if (rows.length > 0)
          ui.info(
            `${plural(r.removed.length, 'plan')} ${verb}, ${r.kept.length} kept${r.dryRun ? ' (dry run: nothing changed)' : ''}`,
          );
        return { data: r };
      }),
    );
}
