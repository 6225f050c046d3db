import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { REGISTRIES, resourceTypeList, resourceTypeShow } from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { qualify } from '../render/definition.render.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';
import { addEntity, readSource, registerRegistryGroup, usedBy, yesNo, type FieldLine } from './registry-group.ts';

interface AddOptions {
  config?: string;
  path?: string;
  branch?: string;
  url?: string;
  credentials?: string;
  push?: string;
  description?: string;
}

const RESOURCE_TYPES = ['git-checkout', 'fs-directory', 'git-remote'] as const;

function registerAdd(group: CliCommand, runner: Runner): void {
  group
    .command('add')
    .description(
      'Register a resource: from flags (agents resource add git-checkout api --path ./api) or a file (--config)',
    )
    .argument('[type]', `the resource type (${RESOURCE_TYPES.join(', ')}; see agents resource type list)`)
    .argument('[name]', 'namespace/name (a bare name means local/<name>)')
    .option('--config <file>', 'the definition file (instead of type, name and flags)')
    .option(
      '--path <path>',
      "the directory (a relative path: against the current directory; on a server, against your namespace's workspace there)",
    )
    .option('--branch <branch>', 'git-checkout, git-remote: the branch plans start from and merge or push into')
    .option('--url <url>', 'git-remote: the repository (https://, http:// or git://)')
    .option('--credentials <secret>', 'git-remote: the secret of your namespace that holds its token')
    .option('--push <mode>', "git-remote: branch (push the plan's branch for review, default) or target")
    .option('--description <text>', 'what it is')
    .calls(REGISTRIES.resource.add)
    .action((type: string | undefined, name: string | undefined, opts: AddOptions, cmd: Command) =>
      runner.run(cmd, 'resource add', async (ctx) => {
        if (opts.config) {
          if (type || name || opts.path || opts.branch || opts.url || opts.credentials || opts.push || opts.description)
            throw new UsageError(
              '--config takes the whole definition from the file: give no type, name or other flags with it',
            );
          return addEntity(ctx, 'resource', { source: readSource(opts.config) });
        }
        if (!type || !name)
          throw new UsageError(
            'give the type and the name (agents resource add git-checkout api --path ./api), or --config FILE',
          );
        if (type === 'git-remote') return addEntity(ctx, 'resource', { definition: remoteDefinition(name, opts) });
        if (opts.url || opts.credentials || opts.push)
          throw new UsageError('--url, --credentials and --push apply to git-remote resources only');
        if (!opts.path)
          throw new UsageError(
            '--path is required',
            'the directory the resource is (see agents resource type show ' + type + ')',
          );
        if (opts.branch && type !== 'git-checkout')
          throw new UsageError('--branch applies to git-checkout and git-remote resources only');
        // A server resolves a relative path in the namespace's workspace: this machine's directories mean nothing there.
        const path = ctx.target.kind === 'server' ? opts.path : resolve(opts.path);
        const definition: Record<string, unknown> = { name: qualify(name), type, path };
        if (opts.branch) definition['branch'] = opts.branch;
        if (opts.description) definition['description'] = opts.description;
        return addEntity(ctx, 'resource', { definition });
      }),
    );
}

/** A git-remote's definition from the flags (the server checks the URL and the rest). */
function remoteDefinition(name: string, opts: AddOptions): Record<string, unknown> {
  if (!opts.url) throw new UsageError('--url is required', 'the repository (see agents resource type show git-remote)');
  if (opts.path) throw new UsageError('--path does not apply to a git-remote: the server keeps its own clone');
  if (opts.push !== undefined && opts.push !== 'branch' && opts.push !== 'target')
    throw new UsageError(`--push takes branch or target, not ${JSON.stringify(opts.push)}`);
  const definition: Record<string, unknown> = { name: qualify(name), type: 'git-remote', url: opts.url };
  if (opts.branch) definition['branch'] = opts.branch;
  if (opts.credentials) definition['credentials'] = opts.credentials;
  if (opts.push) definition['push'] = opts.push;
  if (opts.description) definition['description'] = opts.description;
  return definition;
}

function registerTypes(group: CliCommand, runner: Runner): void {
  const types = group.command('type').description('The resource types and the flags each takes');
  types
    .command('list')
    .description('List the resource types')
    .calls(resourceTypeList)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'resource type list', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(resourceTypeList, {}, { signal: ctx.signal });
        const { ui } = ctx;
        ui.out(
          renderTable(
            r.types,
            [
              { header: 'TYPE', value: (t) => t.type, style: (s) => ui.pal.bold(s) },
              { header: 'FLAGS', value: (t) => t.fields.map((f) => (f.required ? f.flag : `[${f.flag}]`)).join(' ') },
              { header: 'DESCRIPTION', value: (t) => t.description },
            ],
            ui.mode,
          ),
        );
        return { data: r };
      }),
    );
  types
    .command('show')
    .description('Show a resource type and its flags')
    .argument('<type>', RESOURCE_TYPES.join(' or '))
    .calls(resourceTypeShow)
    .action((type: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'resource type show', async (ctx) => {
        const client = await ctx.client();
        const t = await client.call(
          resourceTypeShow,
          { type: type as (typeof RESOURCE_TYPES)[number] },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const flags: FieldLine[] = t.fields.map(
          (f) => [f.flag, `${f.required ? 'required' : 'optional'}: ${f.description}`] as const,
        );
        if (ui.rich)
          ui.out(
            `${ui.pal.bold('Resource type')} ${t.type}\n  ${t.description}\n${renderFields(flags, ui.mode)}  ${ui.pal.dim(`agents resource add ${t.type} <name> ${t.fields.map((f) => (f.required ? `${f.flag} …` : `[${f.flag} …]`)).join(' ')}`)}\n`,
          );
        else ui.out(renderFields([['type', t.type], ['description', t.description], ...flags], ui.mode));
        return { data: t };
      }),
    );
}

/** `agents resource …`: the directories and checkouts plans work on. */
export function registerResource(program: CliCommand, runner: Runner): void {
  const group = registerRegistryGroup(program, runner, {
    kind: 'resource',
    description: 'Resources: the git checkouts and directories plans work on',
    typeFilter: 'type',
    columns: [
      { header: 'TYPE', value: (e) => e.definition.type },
      { header: 'PATH', value: (e) => (e.definition.type === 'git-remote' ? e.definition.url : e.definition.path) },
      { header: 'BRANCH', value: (e) => (e.definition.type === 'fs-directory' ? '' : (e.definition.branch ?? '')) },
    ],
    facts: (e): FieldLine[] => {
      const d = e.derived;
      const git: FieldLine[] =
        e.definition.type === 'git-checkout'
          ? [
              ['git work tree', yesNo(d.gitWorkTree)],
              ['current branch', d.currentBranch ?? ''],
              ['branch exists', yesNo(d.branchExists)],
            ]
          : [];
      return [['exists', yesNo(d.exists)], ['directory', yesNo(d.isDirectory)], ...git, ...usedBy(d)];
    },
    add: registerAdd,
  });
  registerTypes(group, runner);
}
