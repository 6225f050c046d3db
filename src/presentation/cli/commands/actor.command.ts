import type { Command } from 'commander';
import type { Runner } from '../runner.js';
import { registerRegistryGroup, usedBy, yesNo, type FieldLine } from './registry-group.js';

/** `agents actor …`: who does the work (an LLM endpoint, or a built-in deterministic actor). */
export function registerActor(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'actor',
    description: 'Actors: the models (or built-in deterministic actors) that strategize and execute',
    typeFilter: 'provider',
    columns: [
      { header: 'PROVIDER', value: (e) => e.definition.provider },
      { header: 'MODEL', value: (e) => e.definition.model },
    ],
    facts: (e): FieldLine[] => {
      const d = e.derived;
      return [
        ['provider', d.provider],
        ['model', d.model],
        ['runnable', yesNo(d.runnable)],
        ...d.skills.map((s) => ['skill', s] as const),
        ...d.tools.map((t) => ['tool', t] as const),
        ...usedBy(d),
      ];
    },
  });
}
