import type { CliCommand } from '../cli-command.ts';
import type { Runner } from '../runner.ts';
import { accessOf } from './tool.command.ts';
import { registerRegistryGroup, usedBy, type FieldLine } from './registry-group.ts';

/** `agents skill …`: bundles of tools (and MCP servers) with instructions. */
export function registerSkill(program: CliCommand, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'skill',
    description: 'Skills: bundles of tools and MCP servers, with instructions',
    columns: [
      { header: 'TOOLS', value: (e) => String((e.definition.tools ?? []).length) },
      { header: 'MCP', value: (e) => (e.definition.mcpServers ?? []).map((s) => s.name).join(',') },
    ],
    facts: (e): FieldLine[] => {
      const { tools, mcpServers, mcpTools, mcpProblems } = e.derived;
      return [
        ...tools.map(
          (t) =>
            [
              'tool',
              `${t.name}  ${t.missing ? 'MISSING' : `${accessOf(t)} (readOnly=${t.readOnly}, writes=${t.writes})`}  via ${t.via}`,
            ] as const,
        ),
        ...mcpServers.map((m) => ['mcp server', m] as const),
        ...mcpTools.map(
          (t) => ['mcp tool', `${t.name}  ${t.readOnly ? 'read-only' : 'may write'}  ${t.description}`] as const,
        ),
        ...mcpProblems.map((p) => ['mcp problem', p] as const),
        ...usedBy(e.derived),
      ];
    },
  });
}
