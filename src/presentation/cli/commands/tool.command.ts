import type { Command } from 'commander';
import type { Runner } from '../runner.js';
import { defOf, registerRegistryGroup, usedBy } from './registry-group.js';

/** read-only, writes, or neither (a tool with side effects outside files). */
export const accessOf = (t: { readOnly?: unknown; writes?: unknown }): string =>
  t.readOnly === true ? 'read-only' : t.writes === true ? 'writes' : 'side effects';

/** `agents tool …`: what actors may call (built-in, a command, or an MCP server's). */
export function registerTool(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'tool',
    description: 'Tools: what actors may call — builtin/…, commands, MCP servers',
    typeFilter: 'source',
    columns: [
      { header: 'SOURCE', value: (e) => String(defOf(e)['source'] ?? '') },
      { header: 'ACCESS', value: (e) => accessOf(defOf(e)) },
    ],
    facts: (e) => [
      ['source', String(e.derived['source'] ?? '')],
      ['access', accessOf(e.derived)],
      ...usedBy(e.derived),
    ],
  });
}
