import type {
  ActionDefinition,
  ActorDefinition,
  AutomationProfileDefinition,
  ProjectDefinition,
  RegistryEntity,
  RegistryKind,
  ResourceDefinition,
  SkillDefinition,
  ToolDefinition,
} from '../../domain/registry/entities.js';
import type { Referrer, ResourceInspector } from '../ports/registry.repository.port.js';

export interface DeriveContext {
  usedBy: Referrer[];
  lookup(kind: RegistryKind, name: string): Promise<RegistryEntity | undefined>;
  inspector: ResourceInspector;
  builtinModels: readonly string[];
}

export interface FlatTool {
  name: string;
  readOnly: boolean;
  writes: boolean;
  /** How the skill gets it: directly, through an included skill, or from an MCP server. */
  via: string;
  missing?: boolean;
}

/** What `show` adds to a definition: facts computed from the registry and the machine. */
export async function deriveFacts(e: RegistryEntity, ctx: DeriveContext): Promise<Record<string, unknown>> {
  const usedBy = ctx.usedBy;
  switch (e.kind) {
    case 'actor': {
      const a = e.definition as ActorDefinition;
      return {
        provider: a.provider,
        model: a.model,
        skills: a.skills ?? [],
        tools: a.tools ?? [],
        runnable: a.provider === 'builtin' && ctx.builtinModels.includes(a.model),
        usedBy,
      };
    }
    case 'tool': {
      const t = e.definition as ToolDefinition;
      return { source: t.source, readOnly: t.readOnly, writes: t.writes, usedBy };
    }
    case 'skill':
      return { ...(await flattenSkill(e.definition, ctx)), usedBy };
    case 'resource': {
      const r = e.definition as ResourceDefinition;
      const facts = await ctx.inspector.inspect(r.path, r.type === 'git-checkout' ? r.branch : undefined);
      return { ...facts, usedBy };
    }
    case 'project': {
      const p = e.definition as ProjectDefinition;
      const resources = [];
      for (const name of p.resources) {
        const r = await ctx.lookup('resource', name);
        if (!r) {
          resources.push({ name, missing: true, exists: false });
          continue;
        }
        const d = r.definition as ResourceDefinition;
        const facts = await ctx.inspector.inspect(d.path);
        resources.push({ name, type: d.type, path: d.path, exists: facts.exists && facts.isDirectory });
      }
      return { resources, usedBy };
    }
    case 'action': {
      const a = e.definition as ActionDefinition;
      const args = Object.entries(a.arguments ?? {}).map(([name, spec]) => ({
        name,
        type: spec.type,
        required: spec.required ?? spec.default === undefined,
        default: spec.default,
      }));
      return { arguments: args, steps: (a.steps ?? []).length, deterministic: (a.steps ?? []).length > 0, usedBy };
    }
    case 'automation-profile': {
      const p = e.definition as AutomationProfileDefinition;
      return { default: p.default, applyApproval: p.applyApproval ?? true, rules: (p.rules ?? []).length, usedBy };
    }
  }
}

/** The skill's tools, through included skills (cycle-safe), with their readOnly/writes facts. */
async function flattenSkill(
  root: SkillDefinition,
  ctx: DeriveContext,
): Promise<{ tools: FlatTool[]; mcpServers: string[] }> {
  const tools = new Map<string, FlatTool>();
  const mcp = new Set<string>();
  const seen = new Set<string>();
  const walk = async (s: SkillDefinition, via: string): Promise<void> => {
    if (seen.has(s.name)) return;
    seen.add(s.name);
    for (const name of s.tools ?? []) {
      if (tools.has(name)) continue;
      const t = await ctx.lookup('tool', name);
      const d = t?.definition as ToolDefinition | undefined;
      tools.set(
        name,
        d
          ? { name, readOnly: d.readOnly, writes: d.writes, via }
          : { name, readOnly: false, writes: false, via, missing: true },
      );
    }
    for (const server of s.mcpServers ?? []) mcp.add(server.name);
    for (const inc of s.includes ?? []) {
      const child = await ctx.lookup('skill', inc);
      if (child) await walk(child.definition, `skill ${inc}`);
    }
  };
  await walk(root, 'direct');
  return { tools: [...tools.values()], mcpServers: [...mcp] };
}
