import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  CONTEXT_DEFAULTS,
  CONTEXT_VIEWS,
  contextInspect,
  contextSet,
  contextShow,
  contextSimulate,
  type A2AClient,
  type ContextView,
  type ParamsOf,
  type ResultOf,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import {
  renderContextShown,
  renderInspection,
  SETTING_FIELDS,
  settingText,
  type Inspection,
  type SettingField,
  type ViewShown,
} from '../render/context.render.ts';
import { qualify } from '../render/definition.render.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { intOption } from '../support/options.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1048576,
  mb: 1048576,
  mib: 1048576,
};
/** A size in bytes: `4096`, `256k`, `256KiB`, `4MiB` (K and M are 1024-based). */
export function sizeOption(value: string): number {
  const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(value);
  const unit = UNITS[(m?.[2] ?? '').toLowerCase()];
  if (!m || unit === undefined) throw new InvalidArgumentError('must be a size in bytes, e.g. 4096, 256KiB or 4MiB');
  const n = Number(m[1]) * unit;
  if (n < 1 || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be at least 1 byte');
  return n;
}

const viewOption = (): Option =>
  new Option('--view <view>', 'the view: default, strategize, execute or apply').choices(CONTEXT_VIEWS);
const budgetOption = (): Option =>
  new Option('--budget <tokens>', "tokens of file text (instead of the view's budget)").argParser(
    intOption(1, 10_000_000),
  );

/** `--clear` names: the fields as `show` prints them, or as their flags spell them. */
const kebab = (f: string): string => f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
function clearField(name: string): SettingField {
  const f = SETTING_FIELDS.find((x) => x === name || kebab(x) === name);
  if (!f)
    throw new UsageError(
      `--clear ${name}: not a context setting`,
      `give one of ${SETTING_FIELDS.map(kebab).join(', ')}`,
    );
  return f;
}

interface SetOptions {
  view: ContextView;
  include?: string[];
  exclude?: string[];
  maxFileSize?: number;
  maxTotalSize?: number;
  maxFiles?: number;
  tokenBudget?: number;
  ranking?: string;
  instructionsFile?: string[];
  instructionsMaxFileSize?: number;
  instructionsMaxTokens?: number;
  instructions?: 'on' | 'off';
  clear?: string[];
  expectedRevision?: number;
}

type SetSettings = ParamsOf<typeof contextSet>['settings'];

/** The `settings` of `set` from its flags: what is given, and null for what is cleared. */
export function settingsFromFlags(o: Omit<SetOptions, 'view' | 'expectedRevision'>): SetSettings {
  const s: Record<string, unknown> = {};
  if (o.include) s['include'] = o.include;
  if (o.exclude) s['exclude'] = o.exclude;
  if (o.maxFileSize !== undefined) s['maxFileSize'] = o.maxFileSize;
  if (o.maxTotalSize !== undefined) s['maxTotalSize'] = o.maxTotalSize;
  if (o.maxFiles !== undefined) s['maxFiles'] = o.maxFiles;
  if (o.tokenBudget !== undefined) s['tokenBudget'] = o.tokenBudget;
  if (o.ranking !== undefined)
    s['ranking'] = o.ranking
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== '');
  const instructions: Record<string, unknown> = {};
  if (o.instructionsFile) instructions['files'] = o.instructionsFile;
  if (o.instructionsMaxFileSize !== undefined) instructions['maxFileSize'] = o.instructionsMaxFileSize;
  if (o.instructionsMaxTokens !== undefined) instructions['maxTokens'] = o.instructionsMaxTokens;
  if (o.instructions !== undefined) instructions['enabled'] = o.instructions === 'on';
  if (Object.keys(instructions).length > 0) s['instructions'] = instructions;
  for (const name of o.clear ?? []) {
    const f = clearField(name);
    if (f in s) throw new UsageError(`--clear ${name}: it is also set by a flag; give one or the other`);
    s[f] = null;
  }
  if (Object.keys(s).length === 0)
    throw new UsageError(
      'nothing to set: give at least one setting flag or --clear FIELD',
      'e.g. agents project context set api --view execute --max-files 50',
    );
  return s;
}

/** The defaults every project starts from (`show` without a project): no call needed. */
function defaultsShown(view: ContextView | undefined): ViewShown[] {
  const sources = Object.fromEntries(SETTING_FIELDS.map((f) => [f, 'builtin'])) as ViewShown['sources'];
  return (view ? [view] : [...CONTEXT_VIEWS]).map((v) => ({ view: v, settings: CONTEXT_DEFAULTS, sources }));
}

/** Runs inspect or simulate and prints what the context holds. */
async function inspectLike(ctx: RunContext, call: (client: A2AClient) => Promise<Inspection>): Promise<Outcome> {
  const r = await call(await ctx.client());
  const { ui } = ctx;
  ui.out(renderInspection(r, ui));
  if (r.dryRun) ui.out(`${ui.rich ? '\n' : ''}Simulation complete (dry run: nothing was assembled)\n`);
  return { data: r };
}

/** `agents project context show|set|inspect|simulate`: what the project's actors see, and why. */
export function registerProjectContext(project: CliCommand, runner: Runner): void {
  const group = project
    .command('context')
    .description("What a project's actors see: settings per view, and what a goal's context holds and why");
  registerContextShow(group, runner);
  registerContextSet(group, runner);
  registerContextInspect(group, runner);
  registerContextSimulate(group, runner);
}

function registerContextShow(group: CliCommand, runner: Runner): void {
  group
    .command('show')
    .description('The effective context settings per view, and where each value came from')
    .argument('[project]', 'namespace/name (a bare name means local/<name>); absent: the built-in defaults')
    .addOption(viewOption())
    // `show` without a project prints the built-in defaults without a call.
    .calls(contextShow)
    .action((name: string | undefined, opts: { view?: ContextView }, cmd: Command) =>
      runner.run(cmd, 'project context show', async (ctx) => {
        if (name === undefined) {
          const views = defaultsShown(opts.view);
          ctx.ui.out(renderContextShown({ views }, ctx.ui));
          ctx.ui.info("see a project's with: agents project context show PROJECT");
          return { data: { views } };
        }
        const client = await ctx.client();
        const r = await client.call(
          contextShow,
          { project: qualify(name), ...(opts.view ? { view: opts.view } : {}) },
          { signal: ctx.signal },
        );
        ctx.ui.out(renderContextShown(r, ctx.ui));
        return { data: r };
      }),
    );
}

function registerContextSet(group: CliCommand, runner: Runner): void {
  group
    .command('set')
    .description("Set (or --clear) fields of one view's context settings: a new project revision")
    .argument('<project>', 'namespace/name (a bare name means local/<name>)')
    .addOption(viewOption().makeOptionMandatory())
    .option('--include <glob>', 'a glob of files that may be in the context (repeat for several)', collect)
    .option('--exclude <glob>', 'a glob of files never in the context, on top of .gitignore (repeat)', collect)
    .option('--max-file-size <size>', 'a larger file is left out (bytes, or 256KiB, 1MiB)', sizeOption)
    .option('--max-total-size <size>', 'bytes of all included files together (or 4MiB)', sizeOption)
    .option('--max-files <n>', 'most files in the context', intOption(1, 100_000))
    .option(
      '--token-budget <tokens>',
      "tokens of file text (default: the model's window minus the reserves)",
      intOption(1),
    )
    .option('--ranking <list>', 'ranking strategies, comma-separated: goal-match, recency, references, decisions')
    .option(
      '--instructions-file <path>',
      'a file read as instructions, relative to a resource root (repeat for several)',
      collect,
    )
    .option(
      '--instructions-max-file-size <size>',
      'an instruction file larger than this is cut (default 16KiB)',
      sizeOption,
    )
    .option(
      '--instructions-max-tokens <tokens>',
      'tokens of all instruction files together (default 4000)',
      intOption(0),
    )
    .addOption(
      new Option('--instructions <on|off>', 'read AGENTS.md, CLEVERAGENTS.md and the named files (default on)').choices(
        ['on', 'off'],
      ),
    )
    .option('--clear <field...>', 'fields to clear: the view inherits them again (e.g. --clear max-files include)')
    .option('--expected-revision <n>', 'refuse unless the project is at this revision', intOption(1))
    .calls(contextSet)
    .action((name: string, opts: SetOptions, cmd: Command) =>
      runner.run(cmd, 'project context set', async (ctx) => {
        const settings = settingsFromFlags(opts);
        const client = await ctx.client();
        const r = await client.call(
          contextSet,
          {
            project: qualify(name),
            view: opts.view,
            settings,
            ...(opts.expectedRevision !== undefined ? { expectedRevision: opts.expectedRevision } : {}),
          },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        showSet(ui, r, opts.view, settings);
        ui.info(`see it with: agents project context show ${r.project} --view ${opts.view}`);
        return { data: r };
      }),
    );
}

/** What `set` changed, each field with the value the view now has and where it comes from. */
function showSet(ui: RunContext['ui'], r: ResultOf<typeof contextSet>, view: ContextView, settings: SetSettings): void {
  const changed = Object.keys(settings) as SettingField[];
  const shown = r.views.find((v) => v.view === view);
  if (ui.rich) {
    const what = changed
      .map((f) =>
        settings[f] === null
          ? `${f} cleared${shown ? ` (now ${settingText(shown.settings, f, true)} from ${shown.sources[f]})` : ''}`
          : `${f} ${shown ? settingText(shown.settings, f, true) : ''}`.trim(),
      )
      .join('; ');
    ui.out(`Set the ${view} view of ${ui.pal.bold(r.project)}: ${what} ${ui.pal.dim(`(revision ${r.revision})`)}\n`);
  } else ui.out(`set\t${r.project}\t${view}\t${r.revision}\n`);
}

function registerContextInspect(group: CliCommand, runner: Runner): void {
  group
    .command('inspect')
    .description('What is in the context for a plan or a goal, and why: score, tokens, what each limit cut')
    .argument('<project>', 'namespace/name (a bare name means local/<name>)')
    .addOption(viewOption())
    .option('--plan <id>', 'a plan: its goal and decisions so far')
    .option('--goal <text>', 'a goal to assemble the context for')
    .addOption(budgetOption())
    .calls(contextInspect)
    .action((name: string, opts: { view?: ContextView; plan?: string; goal?: string; budget?: number }, cmd: Command) =>
      runner.run(cmd, 'project context inspect', async (ctx) => {
        if (opts.plan !== undefined && opts.goal !== undefined)
          throw new UsageError('give --plan or --goal, not both', 'a plan brings its own goal');
        return inspectLike(ctx, (client) =>
          client.call(
            contextInspect,
            {
              project: qualify(name),
              ...(opts.view ? { view: opts.view } : {}),
              ...(opts.plan !== undefined ? { planId: opts.plan } : {}),
              ...(opts.goal !== undefined ? { goal: opts.goal } : {}),
              ...(opts.budget !== undefined ? { budget: opts.budget } : {}),
            },
            { signal: ctx.signal },
          ),
        );
      }),
    );
}

function registerContextSimulate(group: CliCommand, runner: Runner): void {
  group
    .command('simulate')
    .description('A dry run of inspect for a goal: nothing is assembled for real, tokens are estimates')
    .argument('<project>', 'namespace/name (a bare name means local/<name>)')
    .requiredOption('--goal <text>', 'the goal to simulate the context for')
    .addOption(budgetOption())
    .addOption(viewOption())
    .calls(contextSimulate)
    .action((name: string, opts: { view?: ContextView; goal: string; budget?: number }, cmd: Command) =>
      runner.run(cmd, 'project context simulate', (ctx) =>
        inspectLike(ctx, (client) =>
          client.call(
            contextSimulate,
            {
              project: qualify(name),
              goal: opts.goal,
              ...(opts.view ? { view: opts.view } : {}),
              ...(opts.budget !== undefined ? { budget: opts.budget } : {}),
            },
            { signal: ctx.signal },
          ),
        ),
      ),
    );
}
