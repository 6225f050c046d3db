import type { CliCommand } from '../cli-command.ts';
import type { Runner } from '../runner.ts';
import { registerRegistryGroup, usedBy, type FieldLine } from './registry-group.ts';

/** `agents hook …`: commands or webhooks run before and after tool calls, on plan phases and around apply. */
export function registerHook(program: CliCommand, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'hook',
    typeFilter: 'event',
    description:
      'Hooks: confined commands or webhooks run before a tool call (may veto it), after one, on a plan phase change, before apply (may veto it) and after apply',
    columns: [
      { header: 'EVENT', value: (e) => e.definition.event },
      { header: 'SCOPE', value: (e) => e.definition.project ?? 'global' },
      { header: 'RUNS', value: (e) => (e.definition.command ? 'command' : 'webhook') },
    ],
    facts: (e): FieldLine[] => [
      ['event', `${e.derived.event}${e.derived.vetoes ? ' (may veto)' : ''}`],
      [
        'scope',
        e.derived.scope === 'global'
          ? 'global (every project of its namespace, and chats without one)'
          : `project ${e.derived.scope}${e.derived.projectExists ? '' : ' (not registered)'}`,
      ],
      ['tools', e.derived.tools.length ? e.derived.tools.join(', ') : e.derived.event.includes('tool') ? 'all' : ''],
      ['runs', `${e.derived.runs} ${e.derived.target}`],
      ['timeout', `${e.derived.timeoutSeconds} s`],
      ...usedBy(e.derived),
    ],
  });
}
