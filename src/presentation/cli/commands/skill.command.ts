import type { Command } from 'commander';
import type { Runner } from '../runner.js';
import { accessOf } from './tool.command.js';
import { defOf, registerRegistryGroup, usedBy, type FieldLine } from './registry-group.js';

interface FlatTool {
  name: string;
  readOnly: boolean;
  writes: boolean;
  via: string;
  missing?: boolean;
}

/** `agents skill …`: bundles of tools (and MCP servers) with instructions. */
export function registerSkill(program: Command, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'skill',
    description: 'Skills: bundles of tools and MCP servers, with instructions',
    columns: [
      { header: 'TOOLS', value: (e) => String(((defOf(e)['tools'] as unknown[] | undefined) ?? []).length) },
      {
        header: 'MCP',
        value: (e) =>
          ((defOf(e)['mcpServers'] as Array<{ name: string }> | undefined) ?? []).map((s) => s.name).join(','),
      },
    ],
    facts: (e): FieldLine[] => {
      const tools = (e.derived['tools'] ?? []) as FlatTool[];
      const mcp = (e.derived['mcpServers'] ?? []) as string[];
      return [
        ...tools.map(
          (t) =>
            [
              'tool',
              `${t.name}  ${t.missing ? 'MISSING' : `${accessOf(t)} (readOnly=${t.readOnly}, writes=${t.writes})`}  via ${t.via}`,
            ] as const,
        ),
        ...mcp.map((m) => ['mcp server', m] as const),
        ...usedBy(e.derived),
      ];
    },
  });
}
