/**
 * The tools an LLM actor may call in a chat turn: its own tools and its skills' (through included
 * skills), the tools its skills' MCP servers list, each with the JSON Schema the model is given,
 * whether it only reads, and how it runs. File and command tools work on the project the session
 * is bound to, never outside its resource; without a project they are not offered.
 */
import type { PolicyProfile } from '../../../domain/plan/policy.ts';
import { profileEntityName, type ProjectDefinition } from '../../../domain/registry/project.definition.ts';
import { type ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { type McpServer } from '../../../domain/registry/skill.definition.ts';
import { type ToolDefinition } from '../../../domain/registry/tool.definition.ts';
import type { Session } from '../../../domain/session.ts';
import type { McpHub, McpToolInfo, McpUse } from '../../ports/mcp.port.ts';
import { McpUnavailable } from '../../ports/mcp.port.ts';
import type { RegistryKind } from '../../../domain/registry/entities.ts';
import type { EntityOf, RegistryLookup } from '../../ports/registry.repository.port.ts';
import { namespaceOf } from '../../../domain/registry/names.ts';
import type { SandboxInfo, ToolRunner } from '../../ports/sandbox.port.ts';
import { commandOfCall, normalizeArgs } from '../../plans/tool-call-preview.ts';
import { CODING_TOOLS } from '../../../domain/registry/builtins.ts';
import type { AgentTool } from '../../agent/agent.types.ts';
import { messageOf } from '../../../domain/errors.ts';

export type { ToolOutcome } from '../../agent/agent.types.ts';

/** A tool of a chat turn (the agent loop's tool). */
export type ChatTool = AgentTool;

/** Where a session's file and command tools work. */
export interface ChatWorkspace {
  project: string;
  resource: string;
  root: string;
}

export interface ChatToolSet {
  tools: ChatTool[];
  byModelName: ReadonlyMap<string, ChatTool>;
  /** What the turn could not offer and why (an MCP server down, no project for file tools…). */
  problems: string[];
  /** The skills' instructions, in order. */
  instructions: string[];
  workspace?: ChatWorkspace | undefined;
  /** Decides the calls of tools that are not read-only. */
  profile: PolicyProfile;
}

export interface ChatToolboxDeps {
  lookup: RegistryLookup;
  /**
   * An entity about to be used: undefined when missing, refused when it needs a capability its
   * namespace no longer holds; a resource with its real directory (RegistryService.use).
   */
  use: RegistryLookup;
  tools: ToolRunner;
  mcp: McpHub;
  /** Time limit of a command (ms). */
  commandTimeoutMs: number;
}

/** The profile of a chat whose project names none: calls of tools that may write are asked first. */
export const CHAT_DEFAULT_PROFILE = 'builtin/manual';

export class ChatToolbox {
  /** Whose each MCP server is: the namespace of the skill that declares it (its grants decide how it runs). */
  private readonly owners = new WeakMap<McpServer, McpUse>();

  private readonly deps: ChatToolboxDeps;

  constructor(deps: ChatToolboxDeps) {
    this.deps = deps;
  }

  /** The tools of a turn: the actor's, and the session's project and skills (when it has them). */
  async assemble(
    actor: ActorDefinition,
    session: Pick<Session, 'project' | 'skills'> | undefined,
    signal: AbortSignal,
  ): Promise<ChatToolSet> {
    const problems: string[] = [];
    const { toolNames, servers, instructions } = await this.skillsOf(actor, session, problems);
    const bound = session?.project;
    const project = bound ? await this.usable('project', bound, problems) : undefined;
    if (bound && project === undefined) problems.push(`the session's project ${bound} no longer exists`);
    const projectDef = project?.definition;
    const workspace = projectDef ? await this.workspaceOf(projectDef, problems) : undefined;
    const profile = await this.profileOf(projectDef);

    const turn = new TurnTools(this.deps.mcp, this.owners, signal, problems);
    // A project's chat reads, edits and runs commands with the built-in coding tools.
    const builtins = workspace ? CODING_TOOLS : [];
    for (const name of [...builtins, ...toolNames.filter((n) => !builtins.includes(n))])
      await this.addTool(turn, name, servers, workspace, projectDef?.settings?.network ?? 'none');
    for (const server of servers.values()) {
      const list = await turn.listOf(server);
      for (const t of list ?? [])
        turn.add(
          this.mcpTool(
            server,
            t.name,
            `mcp:${server.name}/${t.name}`,
            t.description,
            t.inputSchema,
            t.readOnly,
            !t.readOnly,
          ),
        );
    }
    const { tools } = turn;
    return {
      tools,
      byModelName: new Map(tools.map((t) => [t.modelName, t])),
      problems,
      instructions,
      workspace,
      profile,
    };
  }

  /** A tool the actor or its skills name: an MCP server's (which a skill must declare) or one that works on the project. */
  private async addTool(
    turn: TurnTools,
    name: string,
    servers: ReadonlyMap<string, McpServer>,
    workspace: ChatWorkspace | undefined,
    network: 'none' | 'allow',
  ): Promise<void> {
    const { problems } = turn;
    const entity = await this.usable('tool', name, problems);
    if (!entity) {
      if (entity === undefined) problems.push(`tool ${name} is not registered`);
      return;
    }
    const def = entity.definition;
    if (def.source.startsWith('mcp:')) {
      const serverName = def.source.slice(4);
      const server = servers.get(serverName);
      if (!server) {
        problems.push(`tool ${name} uses MCP server ${serverName}, which none of the actor's skills declares`);
        return;
      }
      const remote = def.mcpTool ?? name.slice(name.indexOf('/') + 1);
      const list = await turn.listOf(server);
      if (list && !list.some((t) => t.name === remote)) {
        problems.push(`tool ${name}: MCP server ${serverName} has no tool ${remote}`);
        return;
      }
      if (!list) return;
      turn.add(this.mcpTool(server, remote, name, def.description ?? '', def.inputSchema, def.readOnly, def.writes));
      return;
    }
    if (!workspace) {
      problems.push(`tool ${name} works on a project's files: bind the session to a project (--project) to use it`);
      return;
    }
    turn.add(this.localTool(def, workspace, network));
  }

  /** The actor's and the session's skills, through included skills: tools, MCP servers, instructions. */
  private async skillsOf(
    actor: ActorDefinition,
    session: Pick<Session, 'skills'> | undefined,
    problems: string[],
  ): Promise<{ toolNames: string[]; servers: Map<string, McpServer>; instructions: string[] }> {
    const toolNames = [...(actor.tools ?? [])];
    const servers = new Map<string, McpServer>();
    const instructions: string[] = [];
    const seen = new Set<string>();
    const walk = async (name: string): Promise<void> => {
      if (seen.has(name)) return;
      seen.add(name);
      const entity = await this.usable('skill', name, problems);
      if (!entity) {
        if (entity === undefined) problems.push(`skill ${name} is not registered`);
        return;
      }
      const s = entity.definition;
      if (s.instructions) instructions.push(s.instructions);
      for (const t of s.tools ?? []) if (!toolNames.includes(t)) toolNames.push(t);
      for (const m of s.mcpServers ?? []) {
        const had = servers.get(m.name);
        if (had && JSON.stringify(had) !== JSON.stringify(m))
          problems.push(`MCP server ${m.name} is declared differently by two skills; skill ${name}'s is not used`);
        else {
          servers.set(m.name, m);
          this.owners.set(m, { namespace: namespaceOf(entity.name) });
        }
      }
      for (const inc of s.includes ?? []) await walk(inc);
    };
    for (const s of [...(actor.skills ?? []), ...(session?.skills ?? [])]) await walk(s);
    return { toolNames, servers, instructions };
  }

  private async workspaceOf(project: ProjectDefinition, problems: string[]): Promise<ChatWorkspace | undefined> {
    const [first, ...rest] = project.resources;
    if (!first) return undefined;
    const r = await this.usable('resource', first, problems);
    if (!r) {
      if (r === undefined) problems.push(`resource ${first} of project ${project.name} is not registered`);
      return undefined;
    }
    if (rest.length > 0)
      problems.push(`project ${project.name} has ${project.resources.length} resources: chat tools work on ${first}`);
    const d = r.definition;
    if (d.type === 'git-remote') {
      problems.push(
        `resource ${first} of project ${project.name} is a git-remote: chat tools work in a directory; run a plan on it`,
      );
      return undefined;
    }
    return { project: project.name, resource: first, root: d.path };
  }

  /** The entity to use; null (with the reason among the problems) when it is refused. */
  private async usable<K extends RegistryKind>(
    kind: K,
    name: string,
    problems: string[],
  ): Promise<EntityOf<K> | null | undefined> {
    try {
      return await this.deps.use(kind, name);
    } catch (err) {
      problems.push(messageOf(err));
      return null;
    }
  }

  private async profileOf(project: ProjectDefinition | undefined): Promise<PolicyProfile> {
    const name = profileEntityName(project?.settings?.automationProfile ?? CHAT_DEFAULT_PROFILE);
    const entity = await this.deps.lookup('automation-profile', name);
    const def = entity?.definition;
    // A profile removed since the project named it: ask for everything that may write.
    if (!def) return { profile: name, default: 'ask', rules: [] };
    return { profile: name, default: def.default, rules: def.rules ?? [] };
  }

  private localTool(def: ToolDefinition, ws: ChatWorkspace, network: 'none' | 'allow'): Omit<ChatTool, 'modelName'> {
    const sandbox: SandboxInfo = {
      resource: ws.resource,
      // Chat works in the user's directory itself: no checkpoint repository of its own.
      kind: 'git-worktree',
      root: ws.root,
      source: ws.root,
      baseCommit: 'HEAD',
    };
    const { tools, commandTimeoutMs } = this.deps;
    return {
      ref: def.name,
      description: def.description ?? def.name,
      inputSchema: def.inputSchema,
      readOnly: def.readOnly,
      writes: def.writes,
      normalize: (args) => normalizeArgs(def.name, args),
      commandOf: (args) => commandOfCall(def, args),
      preview: (args, signal) =>
        tools.preview ? tools.preview({ tool: def, args, sandbox, signal, network }) : Promise.resolve({}),
      run: async (args, { signal, onOutput }) => {
        const r = await tools.run({ tool: def, args, sandbox, signal, timeoutMs: commandTimeoutMs, network, onOutput });
        return {
          ok: r.ok,
          summary: r.summary,
          output: r.output,
          filesTouched: r.filesTouched,
          exitCode: r.exitCode,
          confinement: r.confinement,
          commandOutput: r.commandOutput,
        };
      },
    };
  }

  private mcpTool(
    server: McpServer,
    remote: string,
    ref: string,
    description: string,
    inputSchema: Record<string, unknown>,
    readOnly: boolean,
    writes: boolean,
  ): Omit<ChatTool, 'modelName'> {
    const { mcp } = this.deps;
    return {
      ref,
      description: description || ref,
      inputSchema,
      readOnly,
      writes,
      commandOf: () => undefined,
      run: (args, { signal }) => mcp.callTool(server, remote, args, signal, this.owners.get(server)),
    };
  }
}

/** One turn's tools as they are gathered: each once, under a unique model name; each MCP server listed once. */
class TurnTools {
  readonly tools: ChatTool[] = [];
  readonly problems: string[];
  private readonly names = new Set<string>();
  private readonly listed = new Map<string, McpToolInfo[] | undefined>();
  private readonly mcp: McpHub;
  private readonly owners: WeakMap<McpServer, McpUse>;
  private readonly signal: AbortSignal;

  constructor(mcp: McpHub, owners: WeakMap<McpServer, McpUse>, signal: AbortSignal, problems: string[]) {
    this.mcp = mcp;
    this.owners = owners;
    this.signal = signal;
    this.problems = problems;
  }

  add(t: Omit<ChatTool, 'modelName'>): void {
    if (this.tools.some((x) => x.ref === t.ref)) return;
    this.tools.push({ ...t, modelName: uniqueModelName(t.ref, this.names) });
  }

  /** The server's tools; undefined (with the reason among the problems) when it cannot be listed. */
  async listOf(server: McpServer): Promise<McpToolInfo[] | undefined> {
    if (this.listed.has(server.name)) return this.listed.get(server.name);
    let result: McpToolInfo[] | undefined;
    try {
      result = await this.mcp.listTools(server, this.signal, this.owners.get(server));
    } catch (err) {
      if (this.signal.aborted) throw err;
      this.problems.push(
        err instanceof McpUnavailable
          ? `${err.message} (${err.hint})`
          : `MCP server ${server.name} failed: ${messageOf(err)}`,
      );
    }
    this.listed.set(server.name, result);
    return result;
  }
}

/** `builtin/read-file` → `builtin__read-file`, `mcp:files/read_file` → `mcp_files__read_file`, unique, ≤ 64. */
export function uniqueModelName(ref: string, taken: Set<string>): string {
  const base =
    ref
      .replace(/\//g, '__')
      .replace(/[^a-zA-Z0-9_-]/g, '_')
      .slice(0, 60) || 'tool';
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
  taken.add(name);
  return name;
}
