/**
 * What `show` adds to a stored definition, per kind: facts computed from the registry (who uses
 * it, the tools a skill reaches) and from the machine (does a resource's path exist). The method
 * table's show results are built from these schemas, and the application and every client take
 * their types from them.
 */
import { z } from 'zod';
import { ActionDefinition } from './action.definition.ts';
import { ActorDefinition } from './actor.definition.ts';
import { AutomationProfileDefinition } from './automation-profile.definition.ts';
import { REGISTRY_KINDS, type DEFINITION_SCHEMAS, type RegistryKind } from './entities.ts';
import { RESOURCE_TYPES } from './resource.definition.ts';
import { ToolDefinition } from './tool.definition.ts';
import { HOOK_EVENTS } from './hook.ts';

/** An entity whose definition refers to another. */
export const Referrer = z.object({ kind: z.enum(REGISTRY_KINDS), name: z.string() });
export type Referrer = z.infer<typeof Referrer>;

/** The entities that refer to this one (`remove` refuses while there are any, unless forced). */
const UsedBy = z.array(Referrer);

export const ActorFacts = z.object({
  provider: ActorDefinition.shape.provider,
  model: z.string(),
  skills: z.array(z.string()),
  tools: z.array(z.string()),
  /** Whether this agent can run it: a built-in model it ships, or an LLM provider it speaks. */
  runnable: z.boolean(),
  /** LLM actors: the endpoint requests go to. */
  endpoint: z.string().optional(),
  /** LLM actors: where the API key comes from and whether it is there (never the key itself). */
  key: z
    .object({
      present: z.boolean(),
      source: z.string().optional(),
      problem: z.string().optional(),
    })
    .optional(),
  usedBy: UsedBy,
});

export const ToolFacts = z.object({
  source: ToolDefinition.shape.source,
  readOnly: z.boolean(),
  writes: z.boolean(),
  usedBy: UsedBy,
});

/** One tool a skill gives, directly or through an included skill. */
export const SkillTool = z.object({
  name: z.string(),
  readOnly: z.boolean(),
  writes: z.boolean(),
  /** How the skill gets it: `direct`, or `skill <name>` for an included skill. */
  via: z.string(),
  /** The tool is not registered (its readOnly/writes are then false). */
  missing: z.boolean().optional(),
});
export type SkillTool = z.infer<typeof SkillTool>;

/** A tool an MCP server of a skill lists, as the actor is offered it. */
export const McpToolFact = z.object({
  /** `mcp:<server>/<tool>`. */
  name: z.string(),
  server: z.string(),
  description: z.string(),
  readOnly: z.boolean(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type McpToolFact = z.infer<typeof McpToolFact>;

export const SkillFacts = z.object({
  /** The skill's tools through its included skills (each once, first path wins). */
  tools: z.array(SkillTool),
  mcpServers: z.array(z.string()),
  /** What its MCP servers list (they are connected to find out). */
  mcpTools: z.array(McpToolFact),
  /** MCP servers that could not be asked, and why. */
  mcpProblems: z.array(z.string()),
  usedBy: UsedBy,
});

/** What the file system says about a path (on the machine the agent runs on). */
export const PathFacts = z.object({
  exists: z.boolean(),
  isDirectory: z.boolean(),
  gitWorkTree: z.boolean(),
  currentBranch: z.string().optional(),
  /** Whether the branch asked about exists in the repository. */
  branchExists: z.boolean().optional(),
});
export type PathFacts = z.infer<typeof PathFacts>;

export const ResourceFacts = PathFacts.extend({ usedBy: UsedBy });

/** One resource of a project: registered (with whether its directory exists), or not. */
export const ProjectResource = z.union([
  z.object({ name: z.string(), type: z.enum(RESOURCE_TYPES), path: z.string(), exists: z.boolean() }),
  z.object({ name: z.string(), missing: z.literal(true), exists: z.literal(false) }),
]);
export type ProjectResource = z.infer<typeof ProjectResource>;

export const ProjectFacts = z.object({ resources: z.array(ProjectResource), usedBy: UsedBy });

const ArgumentSpec = ActionDefinition.shape.arguments.unwrap().valueType.shape;
/** One argument of an action, as `plan use --arg` takes it. */
export const ActionArgument = z.object({
  name: z.string(),
  type: ArgumentSpec.type,
  /** Required when it is marked so, or has no default. */
  required: z.boolean(),
  default: ArgumentSpec.default,
});

export const ActionFacts = z.object({
  arguments: z.array(ActionArgument),
  steps: z.number().int().nonnegative(),
  /** Declared steps: the built-in deterministic actor runs it. */
  deterministic: z.boolean(),
  usedBy: UsedBy,
});

export const AutomationProfileFacts = z.object({
  default: AutomationProfileDefinition.shape.default,
  /** Whether apply asks a person first (unless set otherwise, it does). */
  applyApproval: z.boolean(),
  rules: z.number().int().nonnegative(),
  usedBy: UsedBy,
});

export const HookFacts = z.object({
  event: z.enum(HOOK_EVENTS),
  /** The project it runs for, or `global` (every project of its namespace and chats without one). */
  scope: z.string(),
  /** Whether the project it names is registered (a global hook: true). */
  projectExists: z.boolean(),
  runs: z.enum(['command', 'webhook']),
  /** The program, or the webhook's origin (never its path, query or headers: they may hold secrets). */
  target: z.string(),
  tools: z.array(z.string()),
  timeoutSeconds: z.number().int().positive(),
  /** Whether it may veto what comes next (before-tool-call, before-apply). */
  vetoes: z.boolean(),
  usedBy: UsedBy,
});

/** The derived facts of each kind. */
export const DERIVED_FACT_SCHEMAS = {
  actor: ActorFacts,
  tool: ToolFacts,
  skill: SkillFacts,
  resource: ResourceFacts,
  project: ProjectFacts,
  action: ActionFacts,
  'automation-profile': AutomationProfileFacts,
  hook: HookFacts,
} as const satisfies Record<RegistryKind, z.ZodType>;

/** The derived facts of a kind's `show`. */
export type DerivedFacts<K extends RegistryKind> = z.output<(typeof DERIVED_FACT_SCHEMAS)[K]>;
/** A kind's definition (as validated and stored). */
export type DefinitionOf<K extends RegistryKind> = z.output<(typeof DEFINITION_SCHEMAS)[K]>;
