import type { Command } from 'commander';
import type { Runner } from '../runner.js';
import { defOf, registerRegistryGroup, usedBy, yesNo, type FieldLine } from './registry-group.js';

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** `agents actor …`: who does the work (an LLM endpoint, or a built-in deterministic actor). */
export function registerActor(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'actor',
    description: 'Actors: the models (or built-in deterministic actors) that strategize and execute',
    typeFilter: 'provider',
    columns: [
      { header: 'PROVIDER', value: (e) => String(defOf(e)['provider'] ?? '') },
      { header: 'MODEL', value: (e) => String(defOf(e)['model'] ?? '') },
    ],
    facts: (e): FieldLine[] => {
      const d = e.derived;
      return [
        ['provider', String(d['provider'] ?? '')],
        ['model', String(d['model'] ?? '')],
        ['runnable', yesNo(d['runnable'])],
        ...list(d['skills']).map((s) => ['skill', s] as const),
        ...list(d['tools']).map((t) => ['tool', t] as const),
        ...usedBy(d),
      ];
    },
  });
}
