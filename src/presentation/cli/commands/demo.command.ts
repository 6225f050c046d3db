import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  planApply,
  planDiff,
  planExecute,
  planUse,
  projectRegistry,
  resourceRegistry,
  type A2AClient,
  messageOf,
  REGISTRIES,
  planTree,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { renderDiff, renderStat } from '../render/plan.render.ts';
import type { Ui } from '../render/ui.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { createSampleRepo, currentBranch, git, userRepo } from '../support/demo-repo.ts';
import { renderStrategy, runPhase, stepDecisions, type PhaseRun, PHASE_CALLS } from '../support/plan-run.ts';

interface DemoOptions {
  repo?: string;
  keep?: boolean;
  pattern?: string;
  replacement?: string;
  glob?: string;
}

/** The action the demo runs: the built-in regular-expression replace. */
const DEMO_ACTION = 'builtin/replace';
const SAMPLE_ARGS = { pattern: 'colour', replacement: 'color', glob: 'src/**/*.ts' };

function heading(ui: Ui, n: number, text: string): void {
  ui.out(ui.rich ? `\n${ui.pal.bold(ui.pal.cyan(`${n}.`))} ${ui.pal.bold(text)}\n` : `\n# ${n}. ${text}\n`);
}

/** The repository and the replace arguments: the sample's, or --repo's with all three flags. */
function demoTarget(opts: DemoOptions): {
  sample: { root: string; repo: string } | undefined;
  repo: string;
  branch: string;
  args: typeof SAMPLE_ARGS;
} {
  const fromFlags = [opts.pattern, opts.replacement, opts.glob];
  if (opts.repo && fromFlags.some((v) => v === undefined))
    throw new UsageError(
      'with --repo, give --pattern, --replacement and --glob (what to replace, with what, in which files)',
      'e.g. agents demo --repo . --pattern colour --replacement color --glob "src/**/*.ts"',
    );
  if (!opts.repo && fromFlags.some((v) => v !== undefined))
    throw new UsageError('--pattern, --replacement and --glob go with --repo (the sample repository has its own)');

  const sample = opts.repo ? undefined : createSampleRepo();
  const { repo, branch } = sample
    ? { repo: sample.repo, branch: currentBranch(sample.repo) }
    : userRepo(opts.repo ?? '.');
  const args = opts.repo
    ? { pattern: opts.pattern ?? '', replacement: opts.replacement ?? '', glob: opts.glob ?? '' }
    : SAMPLE_ARGS;
  return { sample, repo, branch, args };
}

/**
 * `agents demo`: the main job end to end, as a user runs it — a repository (a sample one, or
 * yours), a resource and a project registered for it, then plan use → execute (live) → diff →
 * apply, and the commit the result landed in. Every step is an A2A call to the agent.
 */
async function demo(ctx: RunContext, opts: DemoOptions): Promise<Outcome> {
  const { ui } = ctx;
  const { sample, repo, branch, args } = demoTarget(opts);
  const id = randomBytes(4).toString('hex').slice(0, 6);
  const name = `local/demo-${id}`;
  const data: Record<string, unknown> = {
    repo,
    branch,
    resource: name,
    project: name,
    action: DEMO_ACTION,
    arguments: args,
  };
  const client = await ctx.client();
  // What cleanUp undoes: how many registrations were made, and whether every step succeeded.
  const progress = { registered: 0, ok: false };

  if (ui.rich)
    ui.out(`${ui.pal.bold('CleverAgents demo')}: a real plan, end to end, every step an A2A call to the agent\n`);
  try {
    heading(ui, 1, sample ? 'A sample git repository' : 'Your repository');
    ui.out(`${repo} (branch ${branch})\n`);
    ui.out(`${git(repo, ['log', '--oneline', '-1'])}\n`);

    heading(ui, 2, 'Register it: a resource and a project');
    await registerDemoEntities(ctx, client, { id, name, repo, branch }, progress);

    const { planId, failure } = await demoPlan(ctx, client, name, args, data);
    if (failure) return failure;

    heading(ui, 7, `Where it landed: git log -1 --stat (${repo})`);
    const commit = git(repo, ['rev-parse', 'HEAD']);
    data['commit'] = commit;
    ui.out(`${git(repo, ['log', '-1', '--stat', '--format=commit %H%nAuthor: %an <%ae>%nDate:   %ad%n%n    %s'])}\n`);

    const more = [
      `agents plan status ${planId}`,
      `agents plan tree ${planId}`,
      `agents plan diff ${planId}`,
      `agents plan artifacts ${planId}`,
    ];
    ui.out(
      ui.rich
        ? `\n${ui.pal.green('✓')} Done. Look further: ${more.join('  ·  ')}\n`
        : `\nlook further: ${more.join(' ; ')}\n`,
    );
    progress.ok = true;
    return { data };
  } finally {
    await cleanUp(ctx, client, { ...progress, keep: opts.keep === true, name, sample, data });
  }
}

/** Step 2: a resource and a project for the repository, counted as they are made (for cleanUp). */
async function registerDemoEntities(
  ctx: RunContext,
  client: A2AClient,
  { id, name, repo, branch }: { id: string; name: string; repo: string; branch: string },
  progress: { registered: number },
): Promise<void> {
  await client.call(
    resourceRegistry.add,
    { definition: { name, type: 'git-checkout', path: repo, branch, description: `agents demo ${id}` } },
    { signal: ctx.signal },
  );
  progress.registered = 1;
  await client.call(
    projectRegistry.add,
    {
      definition: {
        name,
        resources: [name],
        description: `agents demo ${id}`,
        settings: { automationProfile: 'trusted' },
      },
    },
    { signal: ctx.signal },
  );
  progress.registered = 2;
  ctx.ui.out(`resource ${name} (git-checkout ${repo}, branch ${branch})\nproject  ${name}\n`);
}

/** Steps 3 to 6: plan use → execute → diff → apply; the outcome of the first that fails. */
async function demoPlan(
  ctx: RunContext,
  client: A2AClient,
  name: string,
  args: typeof SAMPLE_ARGS,
  data: Record<string, unknown>,
): Promise<{ planId: string; failure?: Outcome }> {
  const { ui } = ctx;
  heading(
    ui,
    3,
    `Plan: ${DEMO_ACTION} ${Object.entries(args)
      .map(([k, v]) => `--arg ${k}=${v}`)
      .join(' ')}`,
  );
  const use = await runPhase(
    ctx,
    client,
    () =>
      client.call(
        planUse,
        { action: DEMO_ACTION, projects: [name], arguments: args, wait: false },
        { signal: ctx.signal },
      ),
    { yes: false },
  );
  const planId = use.status.planId;
  data['planId'] = planId;
  if (use.error) return { planId, failure: failed(data, use) };
  ui.out(renderStrategy(use.status, await stepDecisions(client, planId, ctx.signal), ui));

  heading(ui, 4, 'Execute it in a sandbox (a git worktree: your working tree is not touched)');
  const exec = await runPhase(
    ctx,
    client,
    () => client.call(planExecute, { planId, wait: false }, { signal: ctx.signal }),
    { yes: false },
  );
  data['execute'] = exec.status;
  if (exec.error) return { planId, failure: failed(data, exec) };

  heading(ui, 5, 'The diff');
  const diff = await client.call(planDiff, { planId }, { signal: ctx.signal });
  data['diff'] = { unified: diff.unified, stats: diff.stats };
  ui.out(renderDiff(diff.unified, ui.mode));
  const files = diff.sandboxes.flatMap((s) => s.files);
  ui.out(`${ui.rich ? '\n' : ''}${renderStat(files, diff.stats, ui.mode)}`);

  heading(ui, 6, 'Apply it (--yes): one commit on your branch');
  const apply = await runPhase(
    ctx,
    client,
    () => client.call(planApply, { planId, yes: true, wait: true }, { signal: ctx.signal }),
    { yes: true },
  );
  data['apply'] = apply.status;
  if (apply.error) return { planId, failure: failed(data, apply) };
  return { planId };
}

/** The last line of the demo: what it leaves behind. */
const note = (ui: Ui, text: string): void => ui.out(ui.rich ? `${ui.pal.dim(text)}\n` : `${text}\n`);

/** A step went wrong: its error, and everything gathered so far for the envelope. */
function failed(data: Record<string, unknown>, run: PhaseRun): Outcome {
  data['failedAt'] = run.status;
  return { data, error: run.error };
}

/**
 * Without --keep, a successful demo removes what it created (the registrations and the sample
 * repository; never your repository). A failed one leaves everything for inspection.
 */
async function cleanUp(
  ctx: RunContext,
  client: A2AClient,
  s: {
    ok: boolean;
    keep: boolean;
    registered: number;
    name: string;
    sample: { root: string; repo: string } | undefined;
    data: Record<string, unknown>;
  },
): Promise<void> {
  const { ui } = ctx;
  if (!s.ok || s.keep) {
    if (s.registered > 0)
      note(
        ui,
        `kept: resource${s.registered > 1 ? ' and project' : ''} ${s.name}${s.sample ? `, the sample repository ${s.sample.repo}` : ''}`,
      );
    s.data['kept'] = true;
    return;
  }
  if (ctx.signal.aborted) return;
  try {
    if (s.registered > 1) await client.call(projectRegistry.remove, { name: s.name }, { signal: ctx.signal });
    if (s.registered > 0) await client.call(resourceRegistry.remove, { name: s.name }, { signal: ctx.signal });
  } catch (err) {
    ui.warn(`could not remove the demo's registrations ${s.name}: ${messageOf(err)}`);
  }
  if (s.sample) rmSync(s.sample.root, { recursive: true, force: true });
  note(ui, `cleaned up: the demo's ${s.sample ? 'sample repository and ' : ''}registrations (--keep keeps them)`);
  s.data['kept'] = false;
}

export function registerDemo(program: CliCommand, runner: Runner): void {
  program
    .command('demo')
    .description(
      'Run a real plan end to end — register a repository, plan use → execute → diff → apply — and show what a user sees',
    )
    .option('--repo <path>', 'use your git repository (its checked-out branch gets the commit) instead of a sample one')
    .option('--pattern <regex>', 'with --repo: the regular expression to replace')
    .option('--replacement <text>', 'with --repo: what to replace it with ($1… for groups)')
    .option('--glob <glob>', 'with --repo: which files (e.g. "src/**/*.ts")')
    .option('--keep', 'keep the sample repository and the registrations it made')
    // The demo registers a sample resource and project (and removes them unless --keep), then runs a plan.
    .calls(
      REGISTRIES.resource.add,
      REGISTRIES.project.add,
      REGISTRIES.resource.remove,
      REGISTRIES.project.remove,
      planUse,
      planExecute,
      planDiff,
      planApply,
      ...PHASE_CALLS,
      planTree,
    )
    .action((opts: DemoOptions, cmd: Command) => runner.run(cmd, 'demo', (ctx) => demo(ctx, opts)));
}
