import { InvalidArgumentError, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { PLAN_REF_CALLS, PLAN_REF_HELP, planRef } from '../support/refs.ts';
import { planApply, planExecute, planUse, planTree } from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { qualify } from '../render/definition.render.ts';
import type { Runner } from '../runner.ts';
import { eventLines } from '../support/events.ts';
import { intOption } from '../support/options.ts';
import {
  renderRunSummary,
  renderStrategy,
  runOutcome,
  runPhase,
  stepDecisions,
  waitingRun,
  type RunStart,
  PHASE_CALLS,
} from '../support/plan-run.ts';

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

const withBudget = <C extends Command>(c: C): C =>
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

interface UseOptions extends Budget {
  arg?: Record<string, string>;
  automationProfile?: string;
  goal?: string;
  actor?: string;
  strategyActor?: string;
  executionActor?: string;
}

/** The `plan/use` request of `agents plan use NAMES…`; a usage error when no project is named. */
function useParams(names: string[], opts: UseOptions) {
  const [first, ...rest] = names;
  // With a goal every name is a project; otherwise the first is the action.
  const action = opts.goal === undefined ? first : undefined;
  const projects = opts.goal === undefined ? rest : names;
  if (projects.length === 0)
    throw new UsageError(
      opts.goal === undefined
        ? action === undefined
          ? 'plan use: name the action and the project it works on'
          : `plan use: name the project that ${action} works on`
        : 'plan use --goal: name the project the goal is for',
      opts.goal === undefined
        ? 'agents plan use <action> <project...> (see agents action list and agents project list), or plan a goal: agents plan use --goal "…" <project...>'
        : 'agents plan use --goal "…" <project...> (see agents project list)',
    );
  return {
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
}

/** `agents plan use`: create a plan and strategize it, printing its steps or decisions. */
export function registerPlanUse(plan: CliCommand, runner: Runner): void {
  withBudget(
    plan
      .command('use')
      .description(
        'Create a plan from an action (or a goal) and projects, and strategize it (prints the plan id and its steps or decisions)',
      )
      // Optional for commander, checked in useParams: its own "missing required argument" would name
      // this internal list, where the user needs to hear "the action, then a project".
      // Two lines under "Usage: ", aligned, so that both forms fit 80 columns.
      .usage('[options] <action> <project...>\n       agents plan use --goal <text> [options] <project...>')
      .argument(
        '[action-and-projects...]',
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
  )
    // The phase commands start a phase, then follow its task (answering approvals) and show the plan.
    .calls(planUse, ...PHASE_CALLS, planTree)
    .action((names: string[], opts: UseOptions, cmd: Command) =>
      runner.run(cmd, 'plan use', async (ctx) => {
        // Before connecting: a usage error needs no agent.
        const params = useParams(names, opts);
        const client = await ctx.client();
        const run = await runPhase(ctx, client, () => client.call(planUse, params, { signal: ctx.signal }), {
          yes: false,
        });
        const steps = run.error ? [] : await stepDecisions(client, run.status.planId, ctx.signal);
        ctx.ui.out(renderStrategy(run.status, steps, ctx.ui));
        return runOutcome(run, { decisions: steps });
      }),
    );
}

/** `agents plan execute`: run the plan in its sandbox, or resume it, with live progress. */
export function registerPlanExecute(plan: CliCommand, runner: Runner): void {
  withBudget(
    plan
      .command('execute')
      .description('Run the plan in a sandbox (or resume it from its last checkpoint), showing progress live')
      .argument('<id>', PLAN_REF_HELP)
      .option('--yes', 'approve every tool call this run would ask about')
      .option(
        '--events',
        'with --format json: one JSON line per event and phase change as it happens, then the result line',
      ),
  )
    .calls(planExecute, ...PHASE_CALLS, ...PLAN_REF_CALLS)
    .action((id: string, opts: Budget & { yes?: boolean; events?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan execute', async (ctx) => {
        const events = eventLines(ctx, opts.events);
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const start = async (): Promise<RunStart> =>
          (await waitingRun(ctx, client, planId, 'tool-approval')) ??
          client.call(
            planExecute,
            { planId, wait: false, ...(opts.yes ? { yes: true } : {}), ...budgetOf(opts) },
            { signal: ctx.signal },
          );
        const run = await runPhase(ctx, client, start, { yes: opts.yes === true, events });
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );
}

/** `agents plan apply`: merge the plan's changes into its projects. */
export function registerPlanApply(plan: CliCommand, runner: Runner): void {
  plan
    .command('apply')
    .description("Merge the plan's changes into the project (asks for approval unless --yes or the auto profile)")
    .argument('<id>', PLAN_REF_HELP)
    .option('--yes', 'approve the apply')
    .calls(planApply, ...PHASE_CALLS, ...PLAN_REF_CALLS)
    .action((id: string, opts: { yes?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan apply', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        // wait: true — the agent reports a conflict as a PlanError only once the apply has settled
        // (with wait: false it may report the error of an earlier attempt); apply is quick, and its
        // progress lines are printed from the task right after.
        const start = async (): Promise<RunStart> =>
          (await waitingRun(ctx, client, planId, 'apply-approval')) ??
          client.call(planApply, { planId, wait: true, ...(opts.yes ? { yes: true } : {}) }, { signal: ctx.signal });
        const run = await runPhase(ctx, client, start, { yes: opts.yes === true });
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );
}
