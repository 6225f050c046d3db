import type { Command } from 'commander';
import { ruleText, type RuleLine } from '../render/policy.js';
import type { Runner } from '../runner.js';
import { defOf, registerRegistryGroup, usedBy, type FieldLine } from './registry-group.js';

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `agents automation-profile …`: what a plan's tool calls may do without a person, rule by rule. */
export function registerAutomationProfile(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'automation-profile',
    description:
      'Automation profiles: allow / ask / deny rules per tool and command pattern for plans, and whether apply asks',
    columns: [
      { header: 'DEFAULT', value: (e) => text(defOf(e)['default']) },
      { header: 'APPLY', value: (e) => (defOf(e)['applyApproval'] === false ? 'no approval' : 'asks') },
      { header: 'RULES', value: (e) => String(((defOf(e)['rules'] as unknown[] | undefined) ?? []).length) },
    ],
    facts: (e): FieldLine[] => {
      const rules = (defOf(e)['rules'] ?? []) as RuleLine[];
      return [
        ['default', `${text(e.derived['default'])} (a call no rule matches)`],
        ['apply', e.derived['applyApproval'] === false ? 'applies without asking' : 'asks before applying'],
        ...rules.map((r, i) => [`rule ${i + 1}`, ruleText(r)] as const),
        ['use it', `agents plan use <action> <project> --automation-profile ${e.name}`],
        ...usedBy(e.derived),
      ];
    },
  });
}
