import type { CliCommand } from '../cli-command.ts';
import { REGISTRIES, type A2AClient } from '../../../protocol/client/index.ts';
import { renderTable } from '../render/table.ts';
import type { RunContext, Runner } from '../runner.ts';
import { registerRegistryGroup, usedBy } from './registry-group.ts';

/** read-only, writes, or neither (a tool with side effects outside files). */
export const accessOf = (t: { readOnly: boolean; writes: boolean }): string =>
  t.readOnly ? 'read-only' : t.writes ? 'writes' : 'side effects';

interface DiscoveredTool {
  name: string;
  skill: string;
  readOnly: boolean;
  description: string;
}

/** The tools the skills' MCP servers list (each server is connected to, to ask). */
async function mcpTools(ctx: RunContext, client: A2AClient): Promise<{ tools: DiscoveredTool[]; problems: string[] }> {
  const skills = await client.call(REGISTRIES.skill.list, { pageSize: 500 }, { signal: ctx.signal });
  const tools: DiscoveredTool[] = [];
  const problems: string[] = [];
  for (const s of skills.items.filter((e) => (e.definition.mcpServers ?? []).length > 0)) {
    const shown = await client.call(REGISTRIES.skill.show, { name: s.name }, { signal: ctx.signal });
    for (const t of shown.derived.mcpTools)
      if (!tools.some((x) => x.name === t.name))
        tools.push({ name: t.name, skill: s.name, readOnly: t.readOnly, description: t.description });
    problems.push(...shown.derived.mcpProblems.map((p) => `skill ${s.name}: ${p}`));
  }
  const { ui } = ctx;
  if (tools.length > 0) {
    if (ui.rich) ui.out(`\n${ui.pal.bold('MCP tools')} ${ui.pal.dim('(from the skills’ MCP servers)')}\n`);
    ui.out(
      renderTable(
        tools,
        [
          { header: 'NAME', value: (t) => t.name },
          { header: 'SKILL', value: (t) => t.skill },
          { header: 'ACCESS', value: (t) => (t.readOnly ? 'read-only' : 'may write') },
          { header: 'DESCRIPTION', value: (t) => t.description },
        ],
        ui.mode,
      ),
    );
  } else ui.info('no MCP tools: no skill declares an MCP server that answered');
  for (const p of problems) ui.warn(p);
  return { tools, problems };
}

/** `agents tool …`: what actors may call (built-in, a command, or an MCP server's). */
export function registerTool(program: CliCommand, runner: Runner): void {
  registerRegistryGroup(program, runner, {
    kind: 'tool',
    description: 'Tools: what actors may call — builtin/…, commands, MCP servers',
    typeFilter: 'source',
    columns: [
      { header: 'SOURCE', value: (e) => e.definition.source },
      { header: 'ACCESS', value: (e) => accessOf(e.definition) },
    ],
    facts: (e) => [['source', e.derived.source], ['access', accessOf(e.derived)], ...usedBy(e.derived)],
    listExtra: {
      flag: '--mcp',
      description: "also list the tools the skills' MCP servers offer (connects to each)",
      // --mcp asks every skill with MCP servers for what they list.
      calls: [REGISTRIES.skill.list, REGISTRIES.skill.show],
      run: mcpTools,
    },
  });
}
