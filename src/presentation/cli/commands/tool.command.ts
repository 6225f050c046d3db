import type { Command } from 'commander';
import type { Runner } from '../runner.js';
import { registerRegistryGroup, usedBy } from './registry-group.js';

/** read-only, writes, or neither (a tool with side effects outside files). */
export const accessOf = (t: { readOnly: boolean; writes: boolean }): string =>
  t.readOnly ? 'read-only' : t.writes ? 'writes' : 'side effects';

/** `agents tool …`: what actors may call (built-in, a command, or an MCP server's). */
export function registerTool(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'tool',
    description: 'Tools: what actors may call — builtin/…, commands, MCP servers',
    typeFilter: 'source',
    columns: [
      { header: 'SOURCE', value: (e) => e.definition.source },
      { header: 'ACCESS', value: (e) => accessOf(e.definition) },
    ],
    facts: (e) => [['source', e.derived.source], ['access', accessOf(e.derived)], ...usedBy(e.derived)],
  });
}
