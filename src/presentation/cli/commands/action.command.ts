import type { CliCommand } from '../cli-command.ts';
import type { Runner } from '../runner.ts';
import { registerRegistryGroup, usedBy, type FieldLine } from './registry-group.ts';

/** `agents action …`: what a plan does — arguments, templates, actors, steps. */
export function registerAction(program: CliCommand, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'action',
    description: 'Actions: what a plan does (arguments, definition of done, actors, declared steps)',
    columns: [{ header: 'STEPS', value: (e) => String((e.definition.steps ?? []).length) }],
    facts: (e): FieldLine[] => {
      const { arguments: args, steps, deterministic } = e.derived;
      return [
        ...args.map(
          (a) =>
            [
              'argument',
              `${a.name}: ${a.type}${a.required ? ', required' : ''}${a.default !== undefined ? `, default ${JSON.stringify(a.default)}` : ''}`,
            ] as const,
        ),
        ['steps', `${steps}${deterministic ? ' (run by the built-in deterministic actor)' : ''}`],
        [
          'use it',
          `agents plan use ${e.name} <project>${args
            .filter((a) => a.required)
            .map((a) => ` --arg ${a.name}=…`)
            .join('')}`,
        ],
        ...usedBy(e.derived),
      ];
    },
  });
}
