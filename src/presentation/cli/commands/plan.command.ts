import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  planApply,
  planApprove,
  planArtifacts,
  planCancel,
  planCorrect,
  planDiff,
  planExecute,
  planExplain,
  planList,
  planPrompt,
  planReject,
  planRollback,
  planStatus,
  planTree,
  planUse,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { qualify, whenText } from '../render/definition.ts';
import {
  phaseState,
  renderArtifacts,
  renderDiff,
  renderPlanStatus,
  renderStat,
  renderTree,
  type PlanStatus,
} from '../render/plan.ts';
import { renderCorrection, renderExplain, wholeOutput } from '../render/plan-decision.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';
import { registerPlanHousekeeping } from './plan-housekeeping.command.ts';
import { eventLines } from '../support/events.ts';
import { choiceOption, intOption } from '../support/options.ts';
import {
  nextCommands,
  renderRunSummary,
  renderStrategy,
  runOutcome,
  runPhase,
  stepDecisions,
  waitingRun,
  type RunStart,
} from '../support/plan-run.ts';

const PHASES = ['strategize', 'execute', 'apply'] as const;
const STATES = ['queued', 'processing', 'complete', 'errored', 'constrained', 'cancelled', 'applied'] as const;

/** `--arg k=v`, repeatable, into an object. */
function argPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('must be name=value');
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

interface Budget {
  maxToolCalls?: number;
  maxWallSeconds?: number;
  maxTokens?: number;
  maxCost?: number;
}
const budgetOf = (o: Budget): Budget => ({
  ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
  ...(o.maxCost !== undefined ? { maxCost: o.maxCost } : {}),
  ...(o.maxToolCalls !== undefined ? { maxToolCalls: o.maxToolCalls } : {}),
  ...(o.maxWallSeconds !== undefined ? { maxWallSeconds: o.maxWallSeconds } : {}),
});

const withBudget = (c: Command): Command =>
  c
    .option('--max-tool-calls <n>', 'budget: most tool calls the plan may make', intOption(1, 100_000))
    .option('--max-wall-seconds <n>', 'budget: most wall-clock seconds', intOption(1, 7 * 24 * 3600))
    .option(
      '--max-tokens <n>',
      "budget: most tokens (input + output) the plan's actors may use",
      intOption(1, 1_000_000_000),
    )
    .option('--max-cost <amount>', "budget: most cost, at the actors' prices (e.g. 0.50)", costOption);

/** A positive amount of money. */
function costOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || n > 1_000_000)
    throw new InvalidArgumentError('must be a positive amount such as 0.50');
  return n;
}

/** `agents plan …`: strategize → execute in a sandbox → apply, with live progress and approvals. */
export function registerPlan(program: Command, runner: Runner): void {
  const plan = program
    .command('plan')
    .description('Plans: an action applied to projects — strategize, execute in a sandbox, apply');

  withBudget(
    plan
      .command('use')
      .description(
        'Create a plan from an action (or a goal) and projects, and strategize it (prints the plan id and its steps or decisions)',
      )
      .argument(
        '<names...>',
        'the action (e.g. builtin/replace; see agents action list), then the projects it works on; with --goal only the projects',
      )
      .option('--goal <text>', 'plan a goal in words (the action builtin/goal): LLM actors strategize and carry it out')
      .option('--actor <name>', 'the LLM actor that strategizes and executes (an action without steps)')
      .option(
        '--strategy-actor <name>',
        'the LLM actor that strategizes (overrides --actor, the action and the project)',
      )
      .option('--execution-actor <name>', 'the LLM actor that executes (overrides --actor, the action and the project)')
      .option('--arg <name=value>', 'an argument of the action (repeat for several; see agents action show)', argPair)
      .option(
        '--automation-profile <profile>',
        'the automation profile whose rules decide each tool call (see agents automation-profile list): manual (every write and the apply), trusted (the apply; default), auto (nothing), or your own; its rules are copied into the plan now',
      ),
  ).action(
    (
      names: string[],
      opts: Budget & {
        arg?: Record<string, string>;
        automationProfile?: string;
        goal?: string;
        actor?: string;
        strategyActor?: string;
        executionActor?: string;
      },
      cmd: Command,
    ) =>
      runner.run(cmd, 'plan use', async (ctx) => {
        const client = await ctx.client();
        const [first, ...rest] = names;
        // With a goal every name is a project; otherwise the first is the action.
        const action = opts.goal === undefined ? first : undefined;
        const projects = opts.goal === undefined ? rest : names;
        if (projects.length === 0)
          throw new UsageError(
            opts.goal === undefined
              ? 'plan use: name the action, then at least one project (or plan a goal: --goal "…" PROJECT)'
              : 'plan use --goal: name at least one project',
          );
        const params = {
          ...(action ? { action: qualify(action) } : {}),
          projects: projects.map(qualify),
          wait: false,
          ...(opts.goal !== undefined ? { goal: opts.goal } : {}),
          ...(opts.actor ? { actor: qualify(opts.actor) } : {}),
          ...(opts.strategyActor ? { strategyActor: qualify(opts.strategyActor) } : {}),
          ...(opts.executionActor ? { executionActor: qualify(opts.executionActor) } : {}),
          ...(opts.arg ? { arguments: opts.arg } : {}),
          ...(opts.automationProfile ? { automationProfile: opts.automationProfile } : {}),
          ...budgetOf(opts),
        };
        const run = await runPhase(ctx, client, () => client.call(planUse, params, { signal: ctx.signal }), {
          yes: false,
        });
        const steps = run.error ? [] : await stepDecisions(client, run.status.planId, ctx.signal);
        ctx.ui.out(renderStrategy(run.status, steps, ctx.ui));
        return runOutcome(run, { decisions: steps });
      }),
  );

  withBudget(
    plan
      .command('execute')
      .description('Run the plan in a sandbox (or resume it from its last checkpoint), showing progress live')
      .argument('<id>', 'the plan id')
      .option('--yes', 'approve every tool call this run would ask about')
      .option(
        '--events',
        'with --format json: one JSON line per event and phase change as it happens, then the result line',
      ),
  ).action((id: string, opts: Budget & { yes?: boolean; events?: boolean }, cmd: Command) =>
    runner.run(cmd, 'plan execute', async (ctx) => {
      const events = eventLines(ctx, opts.events);
      const client = await ctx.client();
      const start = async (): Promise<RunStart> =>
        (await waitingRun(ctx, client, id, 'tool-approval')) ??
        client.call(
          planExecute,
          { planId: id, wait: false, ...(opts.yes ? { yes: true } : {}), ...budgetOf(opts) },
          { signal: ctx.signal },
        );
      const run = await runPhase(ctx, client, start, { yes: opts.yes === true, events });
      ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
      return runOutcome(run);
    }),
  );

  plan
    .command('apply')
    .description("Merge the plan's changes into the project (asks for approval unless --yes or the auto profile)")
    .argument('<id>', 'the plan id')
    .option('--yes', 'approve the apply')
    .action((id: string, opts: { yes?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan apply', async (ctx) => {
        const client = await ctx.client();
        // wait: true — the agent reports a conflict as a PlanError only once the apply has settled
        // (with wait: false it may report the error of an earlier attempt); apply is quick, and its
        // progress lines are printed from the task right after.
        const start = async (): Promise<RunStart> =>
          (await waitingRun(ctx, client, id, 'apply-approval')) ??
          client.call(
            planApply,
            { planId: id, wait: true, ...(opts.yes ? { yes: true } : {}) },
            { signal: ctx.signal },
          );
        const run = await runPhase(ctx, client, start, { yes: opts.yes === true });
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );

  plan
    .command('approve')
    .description('Approve what the plan waits for (a tool call, or the apply), and follow it on')
    .argument('<id>', 'the plan id')
    .option('--yes', 'approve whatever else the run asks')
    .option(
      '--always [what]',
      'also approve the later tool calls of this run with the same command (command, the default) or of the same tool (tool)',
      choiceOption(['command', 'tool']),
    )
    .action((id: string, opts: { yes?: boolean; always?: string | boolean }, cmd: Command) =>
      runner.run(cmd, 'plan approve', async (ctx) => {
        const client = await ctx.client();
        const always = opts.always === true ? 'command' : (opts.always as 'command' | 'tool' | undefined);
        const run = await runPhase(
          ctx,
          client,
          () =>
            client.call(
              planApprove,
              { planId: id, wait: false, ...(always ? { always } : {}) },
              { signal: ctx.signal },
            ),
          { yes: opts.yes === true },
        );
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );

  plan
    .command('reject')
    .description(
      'Reject what the plan waits for: a rejected tool call is skipped, a rejected apply leaves the plan ready to apply',
    )
    .argument('<id>', 'the plan id')
    .option('--guidance <text>', 'what to do instead (kept with the decision)')
    .option('--yes', 'approve whatever else the run asks')
    .action((id: string, opts: { guidance?: string; yes?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan reject', async (ctx) => {
        const client = await ctx.client();
        const params = { planId: id, wait: false, ...(opts.guidance?.trim() ? { guidance: opts.guidance } : {}) };
        const run = await runPhase(ctx, client, () => client.call(planReject, params, { signal: ctx.signal }), {
          yes: opts.yes === true,
        });
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );

  plan
    .command('prompt')
    .description(
      'Give guidance to a plan that errored, and follow it on; on a waiting approval a clear yes approves, any other text rejects with it as guidance',
    )
    .argument('<id>', 'the plan id')
    .argument('<guidance...>', 'what to tell it')
    .option('--yes', 'approve whatever else the run asks')
    .action((id: string, words: string[], opts: { yes?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan prompt', async (ctx) => {
        const client = await ctx.client();
        const run = await runPhase(
          ctx,
          client,
          () => client.call(planPrompt, { planId: id, guidance: words.join(' ') }, { signal: ctx.signal }),
          { yes: opts.yes === true },
        );
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );

  plan
    .command('cancel')
    .description('Stop a plan (a running command is killed); its sandbox stays for inspection unless --clean')
    .argument('<id>', 'the plan id')
    .option('--reason <text>', 'why (kept with the plan)')
    .option('--clean', "also remove the plan's sandboxes and branches (the plan's record stays)")
    .action((id: string, opts: { reason?: string; clean?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan cancel', async (ctx) => {
        const client = await ctx.client();
        const s = await client.call(
          planCancel,
          { planId: id, ...(opts.reason ? { reason: opts.reason } : {}), ...(opts.clean ? { clean: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const sandboxes = s.sandboxes;
        if (ui.rich) {
          ui.out(`Cancelled plan ${s.planId} ${phaseState(s, ui.pal)}\n`);
          for (const b of sandboxes) ui.out(ui.pal.dim(`  sandbox kept for inspection: ${b.root}\n`));
          if (opts.clean) ui.out(ui.pal.dim('  sandboxes and branches removed\n'));
        } else if (opts.clean)
          ui.out(
            renderFields(
              [
                ['plan', s.planId],
                ['phase', s.phase],
                ['state', s.state],
                ['sandboxes', 'removed'],
              ],
              ui.mode,
            ),
          );
        else
          ui.out(
            renderFields(
              [
                ['plan', s.planId],
                ['phase', s.phase],
                ['state', s.state],
                ...sandboxes.map((b) => ['sandbox', b.root] as const),
              ],
              ui.mode,
            ),
          );
        return { data: s };
      }),
    );

  plan
    .command('status')
    .description('Phase, state, progress, usage, error, checkpoints and what is allowed next')
    .argument('<id>', 'the plan id')
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'plan status', async (ctx) => {
        const client = await ctx.client();
        const s = await client.call(planStatus, { planId: id }, { signal: ctx.signal });
        ctx.ui.out(renderPlanStatus(s, ctx.ui));
        if (s.allowed.length) ctx.ui.info(`next: ${nextCommands(s).join('  ·  ')}`);
        return { data: s };
      }),
    );

  plan
    .command('tree')
    .description('The decision tree: what was decided, step by step')
    .argument('<id>', 'the plan id')
    .option('--show-superseded', 'include decisions replaced by corrections')
    .action((id: string, opts: { showSuperseded?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan tree', async (ctx) => {
        const client = await ctx.client();
        const t = await client.call(
          planTree,
          { planId: id, ...(opts.showSuperseded ? { showSuperseded: true } : {}) },
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

  plan
    .command('explain')
    .description('One decision: what was decided and why, its context, tool calls and checkpoint')
    .argument('<decision-id>', 'a decision id (from agents plan tree)')
    .option('--plan <id>', 'the plan it belongs to (faster)')
    .option('--show-context', 'list every file of the context the actor saw (path, tokens, score)')
    .option('--output', "print only the whole output of the decision's command (plan status shows its last lines)")
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

  plan
    .command('correct')
    .description(
      'Correct a decision: revert (supersede it and what follows, roll back, re-strategize) or append guidance',
    )
    .argument('<decision-id>', 'the decision (from agents plan tree)')
    .addOption(new Option('--mode <mode>', 'revert or append').choices(['revert', 'append']).makeOptionMandatory())
    .requiredOption('--guidance <text>', 'what to do differently')
    .option('--dry-run', 'only report what would be invalidated')
    .option('--plan <id>', 'the plan it belongs to (faster)')
    .action(
      (
        decisionId: string,
        opts: { mode: 'revert' | 'append'; guidance: string; dryRun?: boolean; plan?: string },
        cmd: Command,
      ) =>
        runner.run(cmd, 'plan correct', async (ctx) => {
          const client = await ctx.client();
          const r = await client.call(
            planCorrect,
            {
              decisionId,
              mode: opts.mode,
              guidance: opts.guidance,
              ...(opts.dryRun ? { dryRun: true } : {}),
              ...(opts.plan ? { planId: opts.plan } : {}),
            },
            { signal: ctx.signal },
          );
          ctx.ui.out(renderCorrection(r, ctx.ui));
          return { data: r };
        }),
    );

  plan
    .command('diff')
    .description("The plan's changes as a unified diff, then per-file stats")
    .argument('<id>', 'the plan id')
    .option('--stat', 'only the stats')
    .action((id: string, opts: { stat?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan diff', async (ctx) => {
        const client = await ctx.client();
        const d = await client.call(planDiff, { planId: id }, { signal: ctx.signal });
        const { ui } = ctx;
        const files = d.sandboxes.flatMap((s) => s.files);
        if (!opts.stat) ui.out(renderDiff(d.unified, ui.mode));
        if (d.stats.files === 0)
          ui.info(d.source === 'none' ? 'no changes yet: the plan has not executed' : 'no changes');
        else ui.out(`${opts.stat || !ui.rich ? '' : '\n'}${renderStat(files, d.stats, ui.mode)}`);
        if (d.source !== 'sandbox' && d.source !== 'none')
          ui.info(`(the diff as executed; the sandbox is gone${d.source === 'applied' ? ' since the apply' : ''})`);
        return { data: d };
      }),
    );

  plan
    .command('artifacts')
    .description('Per changed file: written, edited or deleted, size, lines added and removed')
    .argument('<id>', 'the plan id')
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'plan artifacts', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(planArtifacts, { planId: id }, { signal: ctx.signal });
        const rows = r.files;
        if (rows.length === 0) ctx.ui.info('no changed files');
        else ctx.ui.out(renderArtifacts(rows, ctx.ui));
        return { data: r };
      }),
    );

  plan
    .command('rollback')
    .description('Restore the sandbox to a checkpoint (from agents plan status); execute then resumes from there')
    .argument('<checkpoint-id>', 'the checkpoint')
    .option('--plan <id>', 'the plan it belongs to (faster)')
    .action((checkpointId: string, opts: { plan?: string }, cmd: Command) =>
      runner.run(cmd, 'plan rollback', async (ctx) => {
        const client = await ctx.client();
        const s = await client.call(
          planRollback,
          { checkpointId, ...(opts.plan ? { planId: opts.plan } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (ui.rich)
          ui.out(
            `Rolled back plan ${s.planId} to checkpoint ${checkpointId} ${phaseState(s, ui.pal)}\n  ${ui.pal.dim(`resume with: agents plan execute ${s.planId} (at step ${s.progress.stepsDone + 1}/${s.progress.stepsTotal})`)}\n`,
          );
        else
          ui.out(
            renderFields(
              [
                ['plan', s.planId],
                ['checkpoint', checkpointId],
                ['phase', s.phase],
                ['state', s.state],
                ['steps', `${s.progress.stepsDone}/${s.progress.stepsTotal}`],
              ],
              ui.mode,
            ),
          );
        return { data: s };
      }),
    );

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
          const updated = (p: PlanStatus): string => whenText(p.timing.updatedAt, ui.rich);
          if (r.plans.length === 0) ui.info('no plans: start one with agents plan use <action> <project>');
          else
            ui.out(
              renderTable(
                r.plans,
                [
                  { header: 'ID', value: (p) => p.planId },
                  {
                    header: 'PHASE/STATE',
                    value: (p) => `${p.phase}/${p.state}`,
                    style: (_s, p) => phaseState(p, ui.pal),
                  },
                  { header: 'STEPS', value: (p) => `${p.progress.stepsDone}/${p.progress.stepsTotal}` },
                  { header: 'ACTION', value: (p) => p.action },
                  { header: 'PROJECTS', value: (p) => p.projects.join(',') },
                  { header: 'UPDATED', value: updated },
                  { header: 'NAME', value: (p) => p.name },
                ],
                ui.mode,
              ),
            );
          if (r.nextPageToken) ui.info(`${r.totalSize} plans; next page: --page-token ${r.nextPageToken}`);
          return { data: r };
        }),
    );

  registerPlanHousekeeping(plan, runner);
}
