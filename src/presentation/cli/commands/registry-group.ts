import { readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  REGISTRIES,
  type A2AClient,
  type RegistryEntityOf,
  type RegistryKind,
  type RegistryPageOf,
  type RegistryShownOf,
  messageOf,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { plural, qualify, renderYaml, shortHash, whenText } from '../render/definition.render.ts';
import { renderFields, renderTable, type Column } from '../render/table.ts';
import type { Ui } from '../render/ui.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { intOption } from '../support/options.ts';

export type FieldLine = readonly [string, string | undefined];

/** What differs between the six registries: list columns, the facts `show` adds, the add command. */
export interface KindSpec<K extends RegistryKind> {
  kind: K;
  description: string;
  /** What `list --type` filters on for this kind (provider, source, resource type). */
  typeFilter?: string;
  /** Columns between REV and DESCRIPTION in `list`. */
  columns: Column<RegistryEntityOf<K>>[];
  /** The derived facts of `show`, as field lines (a key may repeat, one line per item). */
  facts(e: RegistryShownOf<K>, ui: Ui): FieldLine[];
  /** Registers `add` itself (for kinds that also take flags); default: `add --config FILE`. */
  add?(group: CliCommand, runner: Runner): void;
  /** A flag of `list` that adds a section after the table (its data goes under `data.extra`). */
  listExtra?: {
    /** A boolean flag, e.g. `--mcp`. */
    flag: `--${string}`;
    description: string;
    /** The methods `run` calls, declared on the list command beside its own. */
    calls: ReadonlyArray<{ name: string }>;
    run(ctx: RunContext, client: A2AClient): Promise<unknown>;
  };
}

/** `a tool`, `an actor`, `an automation-profile`. */
const article = (word: string): string => (/^[aeiou]/.test(word) ? 'an' : 'a');

export const yesNo = (v: boolean | undefined): string => (v === true ? 'yes' : v === false ? 'no' : '');

/** `used by` lines from a show's derived facts. */
export function usedBy(derived: { usedBy: ReadonlyArray<{ kind: string; name: string }> }): FieldLine[] {
  const refs = derived.usedBy;
  return refs.length ? refs.map((r) => ['used by', `${r.kind} ${r.name}`] as const) : [['used by', 'nothing']];
}

/** A definition file as the agent wants it: its text, its name (for `file:line` errors) and its directory. */
export function readSource(file: string): { text: string; filename: string; baseDir: string } {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : messageOf(err)}`,
      'give the path of a YAML or JSON definition file',
    );
  }
  return { text, filename: basename(path), baseDir: dirname(path) };
}

/** Registers a definition (from a file or from flags) and prints what was added. */
export async function addEntity<K extends RegistryKind>(
  ctx: RunContext,
  kind: K,
  params: { source: ReturnType<typeof readSource> } | { definition: Record<string, unknown> },
): Promise<Outcome> {
  const client = await ctx.client();
  const e = await client.call(REGISTRIES[kind].add, params, { signal: ctx.signal });
  const { ui } = ctx;
  if (ui.rich)
    ui.out(
      `Added ${kind} ${ui.pal.bold(e.name)} ${ui.pal.dim(`revision ${e.revision} · ${shortHash(e.contentHash)}`)}\n`,
    );
  else ui.out(`added\t${kind}\t${e.name}\t${e.revision}\n`);
  ui.info(`see it with: agents ${kind} show ${e.name}`);
  return { data: e };
}

function renderShown<K extends RegistryKind>(e: RegistryShownOf<K>, spec: KindSpec<K>, ui: Ui): string {
  const head: FieldLine[] = [
    ['revision', String(e.revision)],
    ['hash', ui.rich ? shortHash(e.contentHash) : e.contentHash],
    ['created', whenText(e.createdAt, ui.rich)],
    ['updated', whenText(e.updatedAt, ui.rich)],
    ['builtin', ui.rich ? (e.builtin ? 'yes (cannot be changed or removed)' : undefined) : String(e.builtin)],
  ];
  const facts = spec.facts(e, ui);
  const definition = renderYaml(e.definition, ui.mode);
  if (!ui.rich)
    return `${renderFields([['kind', e.kind], ['name', e.name], ...head, ...facts], ui.mode)}definition:\n${definition}`;
  const title = `${ui.pal.bold(`${e.kind[0]?.toUpperCase()}${e.kind.slice(1)}`)} ${e.name}\n`;
  return `${title}${renderFields(head, ui.mode)}${ui.pal.bold('definition')}\n${definition}${facts.length ? `${ui.pal.bold('facts')}\n${renderFields(facts, ui.mode)}` : ''}`;
}

function summaryText(kind: RegistryKind, page: RegistryPageOf<RegistryKind>, typeFilter: string | undefined): string {
  const by = (rec: Record<string, number>): string =>
    Object.entries(rec)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  const parts = [plural(page.totalSize, kind)];
  if (Object.keys(page.summary.byNamespace).length) parts.push(`by namespace: ${by(page.summary.byNamespace)}`);
  if (typeFilter && Object.keys(page.summary.byType).length) parts.push(`by ${typeFilter}: ${by(page.summary.byType)}`);
  return parts.join(' · ');
}

interface ListOptions {
  extra?: boolean;
  namespace?: string;
  name?: string;
  type?: string;
  pageSize?: number;
  pageToken?: string;
  all?: boolean;
}

async function list<K extends RegistryKind>(ctx: RunContext, spec: KindSpec<K>, opts: ListOptions): Promise<Outcome> {
  if (opts.type && !spec.typeFilter) throw new UsageError(`--type does not apply to ${spec.kind}s`);
  if (opts.all && opts.pageToken)
    throw new UsageError('--all reads every page: it cannot be combined with --page-token');
  const client = await ctx.client();
  const query = {
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
    ...(opts.name ? { nameRegex: opts.name } : {}),
    ...(opts.type ? { type: opts.type } : {}),
    ...(opts.pageSize ? { pageSize: opts.pageSize } : opts.all ? { pageSize: 500 } : {}),
  };
  let page = await client.call(
    REGISTRIES[spec.kind].list,
    { ...query, ...(opts.pageToken ? { pageToken: opts.pageToken } : {}) },
    { signal: ctx.signal },
  );
  const items = [...page.items];
  while (opts.all && page.nextPageToken) {
    page = await client.call(
      REGISTRIES[spec.kind].list,
      { ...query, pageToken: page.nextPageToken },
      { signal: ctx.signal },
    );
    items.push(...page.items);
  }
  const { ui } = ctx;
  const columns: Column<RegistryEntityOf<K>>[] = [
    { header: 'NAME', value: (e) => e.name, style: (s, e) => (e.builtin ? ui.pal.dim(s) : ui.pal.bold(s)) },
    { header: 'REV', value: (e) => String(e.revision) },
    ...spec.columns,
    { header: 'DESCRIPTION', value: (e) => e.definition.description ?? '' },
  ];
  if (items.length === 0) ui.info(`no ${spec.kind}s match: add one with \`agents ${spec.kind} add --config FILE\``);
  else ui.out(renderTable(items, columns, ui.mode));
  const summary = summaryText(spec.kind, page, spec.typeFilter);
  // The summary is for people: under the table in rich mode, on stderr in plain mode (stdout stays one row per line).
  if (ui.rich) ui.out(`\n${ui.pal.dim(summary)}\n`);
  else ui.err(`summary: ${summary}\n`);
  if (page.nextPageToken && !opts.all) ui.info(`more: --page-token ${page.nextPageToken} (or --all)`);
  const data: Record<string, unknown> = opts.all
    ? { items, nextPageToken: '', totalSize: page.totalSize, summary: page.summary }
    : { ...page };
  if (opts.extra && spec.listExtra) data['extra'] = await spec.listExtra.run(ctx, client);
  return { data };
}

/** `agents <kind> add|list|show|update|remove`. Returns the group, for kind-specific additions. */
export function registerRegistryGroup<K extends RegistryKind>(
  program: CliCommand,
  runner: Runner,
  spec: KindSpec<K>,
): CliCommand {
  const { kind } = spec;
  const methods = REGISTRIES[kind];
  const group = program.command(kind).description(spec.description);

  if (spec.add) spec.add(group, runner);
  else {
    group
      .command('add')
      .description(`Register ${article(kind)} ${kind} from a YAML or JSON definition file`)
      .requiredOption('--config <file>', 'the definition file')
      .calls(REGISTRIES[kind].add)
      .action((opts: { config: string }, cmd: Command) =>
        runner.run(cmd, `${kind} add`, (ctx) => addEntity(ctx, kind, { source: readSource(opts.config) })),
      );
  }

  registerRegistryList(group, runner, spec);

  group
    .command('show')
    .description(`Show ${article(kind)} ${kind}: definition, revision, hash, timestamps and derived facts`)
    .argument('<name>', 'namespace/name (a bare name means local/<name>)')
    .calls(REGISTRIES[kind].show)
    .action((name: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, `${kind} show`, async (ctx) => {
        const client = await ctx.client();
        const e = await client.call(methods.show, { name: qualify(name) }, { signal: ctx.signal });
        ctx.ui.out(renderShown(e, spec, ctx.ui));
        return { data: e };
      }),
    );

  registerRegistryUpdate(group, runner, spec);
  registerRegistryRemove(group, runner, spec);
  return group;
}

/** `agents <kind> list`, with the kind's own extra flag if it has one. */
function registerRegistryList<K extends RegistryKind>(group: CliCommand, runner: Runner, spec: KindSpec<K>): void {
  const { kind } = spec;
  const listCommand = group
    .command('list')
    .description(`List ${kind}s (built-in ones included), with a summary`)
    .option('--namespace <ns>', 'only this namespace (local, builtin, …)')
    .option('--name <regex>', 'only names matching this regular expression')
    .option('--type <value>', spec.typeFilter ? `only this ${spec.typeFilter}` : '(does not apply)')
    .option('--page-size <n>', 'entries per page (1-500)', intOption(1, 500))
    .option('--page-token <token>', 'the page to show (from a previous list)')
    .option('--all', 'read every page');
  const extra = spec.listExtra;
  if (extra) listCommand.option(extra.flag, extra.description);
  listCommand.calls(REGISTRIES[kind].list, ...(extra?.calls ?? []));
  listCommand.action((opts: ListOptions & Record<string, unknown>, cmd: Command) => {
    const wanted = extra !== undefined && opts[new Option(extra.flag).attributeName()] === true;
    return runner.run(cmd, `${kind} list`, (ctx) => list(ctx, spec, { ...opts, extra: wanted }));
  });
}

/** `agents <kind> update`: a new revision from a file. */
function registerRegistryUpdate<K extends RegistryKind>(group: CliCommand, runner: Runner, spec: KindSpec<K>): void {
  const { kind } = spec;
  const methods = REGISTRIES[kind];
  group
    .command('update')
    .description(`Replace ${article(kind)} ${kind}'s definition from a file (refuses a stale --expected-revision)`)
    .argument('<name>', 'namespace/name (a bare name means local/<name>)')
    .requiredOption('--config <file>', 'the new definition file')
    .option('--expected-revision <n>', 'refuse unless the stored revision is this one', intOption(1))
    .calls(REGISTRIES[kind].update)
    .action((name: string, opts: { config: string; expectedRevision?: number }, cmd: Command) =>
      runner.run(cmd, `${kind} update`, async (ctx) => {
        const source = readSource(opts.config);
        const client = await ctx.client();
        const e = await client.call(
          methods.update,
          {
            name: qualify(name),
            source,
            ...(opts.expectedRevision !== undefined ? { expectedRevision: opts.expectedRevision } : {}),
          },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (ui.rich)
          ui.out(
            e.unchanged
              ? `${kind} ${ui.pal.bold(e.name)} is unchanged ${ui.pal.dim(`(revision ${e.revision})`)}\n`
              : `Updated ${kind} ${ui.pal.bold(e.name)} to revision ${e.revision}\n`,
          );
        else ui.out(`${e.unchanged ? 'unchanged' : 'updated'}\t${kind}\t${e.name}\t${e.revision}\n`);
        return { data: e };
      }),
    );
}

/** `agents <kind> remove`, saying which references it leaves dangling. */
function registerRegistryRemove<K extends RegistryKind>(group: CliCommand, runner: Runner, spec: KindSpec<K>): void {
  const { kind } = spec;
  const methods = REGISTRIES[kind];
  group
    .command('remove')
    .description(`Remove ${article(kind)} ${kind}; refused while others refer to it, unless --force`)
    .argument('<name>', 'namespace/name (a bare name means local/<name>)')
    .option('--force', 'remove it even if others refer to it (their references dangle)')
    .calls(REGISTRIES[kind].remove)
    .action((name: string, opts: { force?: boolean }, cmd: Command) =>
      runner.run(cmd, `${kind} remove`, async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(
          methods.remove,
          { name: qualify(name), ...(opts.force ? { force: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        ui.out(ui.rich ? `Removed ${kind} ${ui.pal.bold(r.name)}\n` : `removed\t${kind}\t${r.name}\n`);
        for (const ref of r.danglingReferrers) ui.warn(`${ref.kind} ${ref.name} still refers to ${kind} ${r.name}`);
        return { data: r };
      }),
    );
}
