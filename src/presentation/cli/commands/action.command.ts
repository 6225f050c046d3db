import type { Command } from 'commander';
import type { Runner } from '../runner.js';
import { defOf, registerRegistryGroup, usedBy, type FieldLine } from './registry-group.js';

interface ArgumentFact {
  name: string;
  type: string;
  required: boolean;
  default?: unknown;
}

/** `agents action …`: what a plan does — arguments, templates, actors, steps. */
export function registerAction(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'action',
    description: 'Actions: what a plan does (arguments, definition of done, actors, declared steps)',
    columns: [{ header: 'STEPS', value: (e) => String(((defOf(e)['steps'] as unknown[] | undefined) ?? []).length) }],
    facts: (e): FieldLine[] => {
      const args = (e.derived['arguments'] ?? []) as ArgumentFact[];
      const steps = Number(e.derived['steps'] ?? 0);
      return [
        ...args.map(
          (a) =>
            [
              'argument',
              `${a.name}: ${a.type}${a.required ? ', required' : ''}${a.default !== undefined ? `, default ${JSON.stringify(a.default)}` : ''}`,
            ] as const,
        ),
        ['steps', `${steps}${e.derived['deterministic'] ? ' (run by the built-in deterministic actor)' : ''}`],
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
