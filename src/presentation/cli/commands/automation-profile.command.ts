import type { CliCommand } from '../cli-command.ts';
import { ruleText } from '../render/policy.render.ts';
import type { Runner } from '../runner.ts';
import { registerRegistryGroup, usedBy, type FieldLine } from './registry-group.ts';

/** `agents automation-profile …`: what a plan's tool calls may do without a person, rule by rule. */
export function registerAutomationProfile(program: CliCommand, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'automation-profile',
    description:
      'Automation profiles: allow / ask / deny rules per tool and command pattern for plans, and whether apply asks',
    columns: [
      { header: 'DEFAULT', value: (e) => e.definition.default },
      { header: 'APPLY', value: (e) => (e.definition.applyApproval === false ? 'no approval' : 'asks') },
      { header: 'RULES', value: (e) => String((e.definition.rules ?? []).length) },
    ],
    facts: (e): FieldLine[] => {
      const rules = e.definition.rules ?? [];
      return [
        ['default', `${e.derived.default} (a call no rule matches)`],
        ['apply', e.derived.applyApproval ? 'asks before applying' : 'applies without asking'],
        ...rules.map((r, i) => [`rule ${i + 1}`, ruleText(r)] as const),
        ['use it', `agents plan use <action> <project> --automation-profile ${e.name}`],
        ...usedBy(e.derived),
      ];
    },
  });
}
