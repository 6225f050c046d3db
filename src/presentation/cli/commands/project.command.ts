import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { UsageError } from '../exit-codes.ts';
import { qualify } from '../render/definition.render.ts';
import type { Runner } from '../runner.ts';
import { registerProjectContext } from './context.command.ts';
import { addEntity, readSource, registerRegistryGroup, usedBy, type FieldLine } from './registry-group.ts';
import { REGISTRIES } from '../../../protocol/client/index.ts';

interface AddOptions {
  config?: string;
  resource?: string[];
  automationProfile?: string;
  description?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function registerAdd(group: CliCommand, runner: Runner): void {
  group
    .command('add')
    .alias('create')
    .description('Register a project: from flags (agents project create api --resource api) or a file (--config)')
    .argument('[name]', 'namespace/name (a bare name means local/<name>)')
    .option('--config <file>', 'the definition file (instead of a name and flags)')
    .option('--resource <name>', 'a resource of the project (repeat for several)', collect)
    .option(
      '--automation-profile <profile>',
      'the automation profile of its plans: manual, trusted, auto or your own (see agents automation-profile list)',
    )
    .option('--description <text>', 'what it is')
    .calls(REGISTRIES.project.add)
    .action((name: string | undefined, opts: AddOptions, cmd: Command) =>
      runner.run(cmd, 'project add', async (ctx) => {
        if (opts.config) {
          if (name || opts.resource || opts.automationProfile || opts.description)
            throw new UsageError(
              '--config takes the whole definition from the file: give no name or other flags with it',
            );
          return addEntity(ctx, 'project', { source: readSource(opts.config) });
        }
        if (!name)
          throw new UsageError('give the project name (agents project create api --resource api), or --config FILE');
        if (!opts.resource?.length)
          throw new UsageError(
            '--resource is required (at least one)',
            'see the registered resources with agents resource list',
          );
        const definition: Record<string, unknown> = { name: qualify(name), resources: opts.resource.map(qualify) };
        if (opts.description) definition['description'] = opts.description;
        if (opts.automationProfile) definition['settings'] = { automationProfile: opts.automationProfile };
        return addEntity(ctx, 'project', { definition });
      }),
    );
}

/** `agents project …`: one or more resources that plans change together. */
export function registerProject(program: CliCommand, runner: Runner): void {
  const group = registerRegistryGroup(program, runner, {
    kind: 'project',
    description: 'Projects: the resources a plan changes together, and their settings',
    columns: [{ header: 'RESOURCES', value: (e) => e.definition.resources.join(',') }],
    facts: (e): FieldLine[] => [
      ...e.derived.resources.map(
        (r) =>
          [
            'resource',
            'missing' in r
              ? `${r.name}  NOT REGISTERED`
              : `${r.name}  ${r.type}  ${r.path}  ${r.exists ? 'exists' : 'MISSING'}`,
          ] as const,
      ),
      ...usedBy(e.derived),
    ],
    add: registerAdd,
  });
  registerProjectContext(group, runner);
}
