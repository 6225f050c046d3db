import { type Command, Option } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  planArtifacts,
  planDiff,
  planExplain,
  planList,
  planStatus,
  planTree,
} from '../../../protocol/client/index.ts';
import { qualify } from '../render/definition.render.ts';
import { renderArtifacts, renderDiff, renderPlanStatus, renderStat, renderTree } from '../render/plan.render.ts';
import { renderExplain, wholeOutput } from '../render/plan-decision.render.ts';
import { renderPlanList } from '../render/list.render.ts';
import type { Runner } from '../runner.ts';
import { intOption } from '../support/options.ts';
import { nextCommands } from '../support/plan-run.ts';
import { PLAN_REF_CALLS, PLAN_REF_HELP, planRef } from '../support/refs.ts';

const PHASES = ['strategize', 'execute', 'apply'] as const;
const STATES = ['queued', 'processing', 'complete', 'errored', 'constrained', 'cancelled', 'applied'] as const;

/** `agents plan status`: where the plan is and what may come next. */
export function registerPlanStatus(plan: CliCommand, runner: Runner): void {
  plan
    .command('status')
    .alias('show')
    .description('Phase, state, progress, usage, error, checkpoints and what is allowed next')
    .argument('<id>', PLAN_REF_HELP)
    .calls(planStatus, ...PLAN_REF_CALLS)
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'plan status', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const s = await client.call(planStatus, { planId }, { signal: ctx.signal });
        ctx.ui.out(renderPlanStatus(s, ctx.ui));
        if (s.allowed.length) ctx.ui.info(`next: ${nextCommands(s).join('  ·  ')}`);
        return { data: s };
      }),
    );
}

/** `agents plan tree`: the decision tree. */
export function registerPlanTree(plan: CliCommand, runner: Runner): void {
  plan
    .command('tree')
    .description('The decision tree: what was decided, step by step')
    .argument('<id>', PLAN_REF_HELP)
    .option('--show-superseded', 'include decisions replaced by corrections')
    .calls(planTree, ...PLAN_REF_CALLS)
    .action((id: string, opts: { showSuperseded?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan tree', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const t = await client.call(
          planTree,
          { planId, ...(opts.showSuperseded ? { showSuperseded: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (ui.rich)
          ui.out(`${ui.pal.bold('Decisions')} of plan ${t.planId} ${ui.pal.dim(`(attempt ${t.attempt})`)}\n`);
        ui.out(renderTree(t.decisions, ui.mode));
        ui.info(
          `explain one: agents plan explain <decision-id> · correct it: agents plan correct <decision-id> --mode revert|append --guidance "…"`,
        );
        return { data: t };
      }),
    );
}

/** `agents plan explain`: one decision, or the whole output of its command. */
export function registerPlanExplain(plan: CliCommand, runner: Runner): void {
  plan
    .command('explain')
    .description('One decision: what was decided and why, its context, tool calls and checkpoint')
    .argument('<decision-id>', 'a decision id (from agents plan tree)')
    .option('--plan <id>', 'the plan it belongs to (faster)')
    .option('--show-context', 'list every file of the context the actor saw (path, tokens, score)')
    .option('--output', "print only the whole output of the decision's command (plan status shows its last lines)")
    .calls(planExplain)
    .action((decisionId: string, opts: { plan?: string; showContext?: boolean; output?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan explain', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(
          planExplain,
          { decisionId, ...(opts.plan ? { planId: opts.plan } : {}) },
          { signal: ctx.signal },
        );
        if (opts.output) ctx.ui.out(wholeOutput(r, ctx.ui));
        else ctx.ui.out(renderExplain(r, ctx.ui, opts.showContext ?? false));
        return { data: r };
      }),
    );
}

/** `agents plan diff`: the plan's changes and per-file stats. */
export function registerPlanDiff(plan: CliCommand, runner: Runner): void {
  plan
    .command('diff')
    .description("The plan's changes as a unified diff, then per-file stats")
    .argument('<id>', PLAN_REF_HELP)
    .option('--stat', 'only the stats')
    .calls(planDiff, ...PLAN_REF_CALLS)
    .action((id: string, opts: { stat?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan diff', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const d = await client.call(planDiff, { planId }, { signal: ctx.signal });
        const { ui } = ctx;
        const files = d.sandboxes.flatMap((s) => s.files);
        if (!opts.stat) ui.out(renderDiff(d.unified, ui.mode));
        if (d.stats.files === 0)
          ui.done(
            d.source === 'none'
              ? `no changes yet: plan ${planId} has not executed`
              : `no changes: plan ${planId} changed no file`,
          );
        else ui.out(`${opts.stat || !ui.rich ? '' : '\n'}${renderStat(files, d.stats, ui.mode)}`);
        if (d.source !== 'sandbox' && d.source !== 'none')
          ui.info(`(the diff as executed; the sandbox is gone${d.source === 'applied' ? ' since the apply' : ''})`);
        return { data: d };
      }),
    );
}

/** `agents plan artifacts`: each changed file, with its size and lines. */
export function registerPlanArtifacts(plan: CliCommand, runner: Runner): void {
  plan
    .command('artifacts')
    .description('Per changed file: written, edited or deleted, size, lines added and removed')
    .argument('<id>', PLAN_REF_HELP)
    .calls(planArtifacts, ...PLAN_REF_CALLS)
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'plan artifacts', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const r = await client.call(planArtifacts, { planId }, { signal: ctx.signal });
        const rows = r.files;
        if (rows.length === 0) ctx.ui.info('no changed files');
        else ctx.ui.out(renderArtifacts(rows, ctx.ui));
        return { data: r };
      }),
    );
}

/** `agents plan list`: your plans, newest first, a page at a time. */
export function registerPlanList(plan: CliCommand, runner: Runner): void {
  plan
    .command('list')
    .description('Your plans, newest first')
    .addOption(new Option('--phase <phase>', 'only plans in this phase').choices(PHASES))
    .addOption(new Option('--state <state>', 'only plans in this state').choices(STATES))
    .option('--project <name>', 'only plans on this project')
    .option('--action <name>', 'only plans of this action')
    .option('--name <regex>', 'only plans whose name matches')
    .option('--page-size <n>', 'plans per page (1-500)', intOption(1, 500))
    .option('--page-token <token>', 'the page to show (from a previous list)')
    .calls(planList)
    .action(
      (
        opts: {
          phase?: (typeof PHASES)[number];
          state?: (typeof STATES)[number];
          project?: string;
          action?: string;
          name?: string;
          pageSize?: number;
          pageToken?: string;
        },
        cmd: Command,
      ) =>
        runner.run(cmd, 'plan list', async (ctx) => {
          const client = await ctx.client();
          const params = {
            ...(opts.phase ? { phase: opts.phase } : {}),
            ...(opts.state ? { state: opts.state } : {}),
            ...(opts.project ? { project: qualify(opts.project) } : {}),
            ...(opts.action ? { action: qualify(opts.action) } : {}),
            ...(opts.name ? { nameRegex: opts.name } : {}),
            ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
            ...(opts.pageToken ? { pageToken: opts.pageToken } : {}),
          };
          const r = await client.call(planList, params, { signal: ctx.signal });
          const { ui } = ctx;
          if (r.plans.length === 0) ui.info('no plans: start one with agents plan use <action> <project>');
          else ui.out(renderPlanList(r.plans, ui.mode));
          if (r.nextPageToken) ui.info(`${r.totalSize} plans; next page: --page-token ${r.nextPageToken}`);
          return { data: r };
        }),
    );
}
