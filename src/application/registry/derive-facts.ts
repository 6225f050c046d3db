import type {
  DefinitionOf,
  DerivedFacts,
  McpToolFact,
  ProjectResource,
  Referrer,
  SkillTool,
} from '../../domain/registry/derived-facts.ts';
import type { RegistryKind } from '../../domain/registry/entities.ts';
import type { LocalResource } from '../../domain/registry/resource.definition.ts';
import type { SkillDefinition } from '../../domain/registry/skill.definition.ts';
import { actorEndpoint, namesApiKey } from '../../domain/registry/actor.definition.ts';
import { type McpServer } from '../../domain/registry/skill.definition.ts';
import { DEFAULT_HOOK_TIMEOUT_SECONDS, VETO_EVENTS } from '../../domain/registry/hook.ts';
import type { RegistryLookup, ResourceInspector } from '../ports/registry.repository.port.ts';
import type { ApiKeys } from '../ports/language-model.port.ts';
import type { McpHub, McpUse } from '../ports/mcp.port.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import { McpUnavailable } from '../ports/mcp.port.ts';
import { messageOf } from '../../domain/errors.ts';

export interface DeriveContext {
  usedBy: Referrer[];
  lookup: RegistryLookup;
  inspector: ResourceInspector;
  builtinModels: readonly string[];
  /** Present when this agent runs LLM actors: their keys and MCP servers. */
  llm?: { keys: ApiKeys; mcp: McpHub } | undefined;
  /** A resource's real directory, when it may be used now (its workspace, its grant); else undefined. */
  rootOf(resource: LocalResource): Promise<string | undefined>;
  /** Why a definition may not be used now (a capability its namespace does not hold), or undefined. */
  refusal(kind: RegistryKind, definition: SkillDefinition): Promise<string | undefined>;
}

type Deriver<K extends RegistryKind> = (
  definition: DefinitionOf<K>,
  ctx: DeriveContext,
) => DerivedFacts<K> | Promise<DerivedFacts<K>>;

/** Each kind's facts; a new kind without an entry does not compile. */
const DERIVERS: { [K in RegistryKind]: Deriver<K> } = {
  actor: async (a, ctx) => {
    const base = {
      provider: a.provider,
      model: a.model,
      skills: a.skills ?? [],
      tools: a.tools ?? [],
      usedBy: ctx.usedBy,
    };
    if (a.provider === 'builtin') return { ...base, runnable: ctx.builtinModels.includes(a.model) };
    const endpoint = actorEndpoint(a);
    if (!ctx.llm) return { ...base, runnable: false, endpoint };
    const k = await ctx.llm.keys.resolve(a);
    const key = k.present
      ? { present: true, source: k.source }
      : { present: false, ...(k.source ? { source: k.source } : {}), problem: k.problem };
    // No key named: a local endpoint (Ollama, llama.cpp) may need none.
    return { ...base, runnable: !namesApiKey(a) || k.present, endpoint, key };
  },
  tool: (t, ctx) => ({ source: t.source, readOnly: t.readOnly, writes: t.writes, usedBy: ctx.usedBy }),
  skill: async (s, ctx) => {
    const flat = await flattenSkill(s, ctx);
    const { servers, ...rest } = flat;
    // Showing connects to the skill's MCP servers, which starts their programs: only if it may.
    const refused = servers.length > 0 ? await ctx.refusal('skill', s) : undefined;
    if (refused !== undefined) return { ...rest, mcpTools: [], mcpProblems: [refused], usedBy: ctx.usedBy };
    return { ...rest, ...(await discoverMcp(servers, ctx, { namespace: namespaceOf(s.name) })), usedBy: ctx.usedBy };
  },
  resource: async (r, ctx) => {
    // A git-remote's clone is the server's, made when a plan runs: there is no directory to inspect.
    if (r.type === 'git-remote') return { exists: false, isDirectory: false, gitWorkTree: false, usedBy: ctx.usedBy };
    const root = await ctx.rootOf(r);
    const facts = root
      ? await ctx.inspector.inspect(root, r.type === 'git-checkout' ? r.branch : undefined)
      : { exists: false, isDirectory: false, gitWorkTree: false };
    return { ...facts, usedBy: ctx.usedBy };
  },
  project: async (p, ctx) => {
    const resources: ProjectResource[] = [];
    for (const name of p.resources) {
      const r = await ctx.lookup('resource', name);
      if (!r) {
        resources.push({ name, missing: true, exists: false });
        continue;
      }
      const d = r.definition;
      if (d.type === 'git-remote') {
        resources.push({ name, type: d.type, path: d.url, exists: true });
        continue;
      }
      const root = await ctx.rootOf(d);
      const facts = root ? await ctx.inspector.inspect(root) : undefined;
      resources.push({
        name,
        type: d.type,
        path: d.path,
        exists: facts !== undefined && facts.exists && facts.isDirectory,
      });
    }
    return { resources, usedBy: ctx.usedBy };
  },
  action: (a, ctx) => {
    const args = Object.entries(a.arguments ?? {}).map(([name, spec]) => ({
      name,
      type: spec.type,
      required: spec.required ?? spec.default === undefined,
      ...(spec.default !== undefined ? { default: spec.default } : {}),
    }));
    const steps = (a.steps ?? []).length;
    return { arguments: args, steps, deterministic: steps > 0, usedBy: ctx.usedBy };
  },
  'automation-profile': (p, ctx) => ({
    default: p.default,
    applyApproval: p.applyApproval ?? true,
    rules: (p.rules ?? []).length,
    usedBy: ctx.usedBy,
  }),
  hook: async (h, ctx) => ({
    event: h.event,
    scope: h.project ?? 'global',
    projectExists: h.project === undefined || (await ctx.lookup('project', h.project)) !== undefined,
    runs: h.command ? 'command' : 'webhook',
    target: h.command ? h.command.program : originOf(h.webhook?.url ?? ''),
    tools: h.tools ?? [],
    timeoutSeconds: h.timeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS,
    vetoes: VETO_EVENTS.has(h.event),
    usedBy: ctx.usedBy,
  }),
};

const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

/** What `show` adds to a definition of kind K: facts computed from the registry and the machine. */
export function deriveFacts<K extends RegistryKind>(
  kind: K,
  definition: DefinitionOf<K>,
  ctx: DeriveContext,
): Promise<DerivedFacts<K>> {
  return Promise.resolve(DERIVERS[kind](definition, ctx));
}

/** The skill's tools, through included skills (cycle-safe), with their readOnly/writes facts. */
async function flattenSkill(
  root: SkillDefinition,
  ctx: DeriveContext,
): Promise<{ tools: SkillTool[]; mcpServers: string[]; servers: McpServer[] }> {
  const tools = new Map<string, SkillTool>();
  const mcp = new Map<string, McpServer>();
  const seen = new Set<string>();
  const walk = async (s: SkillDefinition, via: string): Promise<void> => {
    if (seen.has(s.name)) return;
    seen.add(s.name);
    for (const name of s.tools ?? []) {
      if (tools.has(name)) continue;
      const t = await ctx.lookup('tool', name);
      const d = t?.definition;
      tools.set(
        name,
        d
          ? { name, readOnly: d.readOnly, writes: d.writes, via }
          : { name, readOnly: false, writes: false, via, missing: true },
      );
    }
    for (const server of s.mcpServers ?? []) if (!mcp.has(server.name)) mcp.set(server.name, server);
    for (const inc of s.includes ?? []) {
      const child = await ctx.lookup('skill', inc);
      if (child) await walk(child.definition, `skill ${inc}`);
    }
  };
  await walk(root, 'direct');
  return { tools: [...tools.values()], mcpServers: [...mcp.keys()], servers: [...mcp.values()] };
}

/** Asks each MCP server for its tools (connecting to it); a server that cannot be asked is a problem. */
async function discoverMcp(
  servers: readonly McpServer[],
  ctx: DeriveContext,
  use: McpUse,
): Promise<{ mcpTools: McpToolFact[]; mcpProblems: string[] }> {
  const mcpTools: McpToolFact[] = [];
  const mcpProblems: string[] = [];
  if (servers.length === 0) return { mcpTools, mcpProblems };
  if (!ctx.llm) return { mcpTools, mcpProblems: ['this agent does not connect to MCP servers'] };
  const signal = new AbortController().signal;
  for (const server of servers) {
    try {
      for (const t of await ctx.llm.mcp.listTools(server, signal, use))
        mcpTools.push({
          name: `mcp:${server.name}/${t.name}`,
          server: server.name,
          description: t.description,
          readOnly: t.readOnly,
          inputSchema: t.inputSchema,
        });
    } catch (err) {
      mcpProblems.push(
        err instanceof McpUnavailable ? `${err.message} (${err.hint})` : `${server.name}: ${messageOf(err)}`,
      );
    }
  }
  return { mcpTools, mcpProblems };
}
