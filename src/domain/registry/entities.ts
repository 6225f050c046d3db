/**
 * Registry definitions (DESIGN.md §4.2): what a user writes in a YAML or JSON file, validated
 * strictly. Each kind declares which other entities it refers to, so removal can refuse an entity
 * still in use and name its referrers.
 */
import { z } from 'zod';
import { InstructionPath, ProjectContextSettings } from '../context/context.ts';
import { POLICY_DECISIONS, PolicyRule } from '../plan/policy.ts';
import { HookDefinition } from './hook.ts';
import { EntityName } from './names.ts';

export const REGISTRY_KINDS = [
  'actor',
  'tool',
  'skill',
  'resource',
  'project',
  'action',
  'automation-profile',
  'hook',
] as const;
export type RegistryKind = (typeof REGISTRY_KINDS)[number];
export const PLURAL: Record<RegistryKind, string> = {
  actor: 'actors',
  tool: 'tools',
  skill: 'skills',
  resource: 'resources',
  project: 'projects',
  action: 'actions',
  'automation-profile': 'automation-profiles',
  hook: 'hooks',
};

const Description = z.string().max(2000, 'is at most 2000 characters');
const Ref = EntityName;
const AbsolutePath = z
  .string()
  .min(1)
  .refine((p) => p.startsWith('/'), 'must be an absolute path');

/** A JSON Schema document (checked for shape, not re-validated as a meta-schema). */
const JsonSchemaObject = z
  .looseObject({ type: z.string().optional() })
  .refine((s) => s.type === undefined || s.type === 'object', {
    message: 'a tool input schema must describe an object ("type": "object")',
  });

/** The providers an actor may name: LLM endpoints, or the built-in deterministic actors. */
export const ACTOR_PROVIDERS = ['openai-compatible', 'openai', 'anthropic', 'builtin'] as const;
export type ActorProvider = (typeof ACTOR_PROVIDERS)[number];

/** What an LLM actor uses when its definition leaves a field out. */
export const LLM_ACTOR_DEFAULTS = {
  /** Tokens the model sees at most (prompt and answer); a model's real window is usually larger. */
  contextWindow: 8192,
  /** Tokens an answer may have when the actor sets no maxTokens. */
  maxTokens: 2048,
  timeoutSeconds: 120,
  maxRetries: 2,
  maxToolSteps: 20,
} as const;

/**
 * The price of prompt-cache tokens as a multiple of an actor's input price, when its `prices` name
 * none: what each provider bills. An openai-compatible endpoint may be anyone's, so its cached
 * tokens cost what input costs (a cost budget then never counts less than was spent).
 */
export const CACHE_PRICE_FACTORS: Readonly<Record<ActorProvider, { read: number; write: number }>> = {
  anthropic: { read: 0.1, write: 1.25 },
  openai: { read: 0.5, write: 1 },
  'openai-compatible': { read: 1, write: 1 },
  builtin: { read: 1, write: 1 },
};

/** What an actor's `compaction` uses when it leaves a field out. */
export const COMPACTION_DEFAULTS = { threshold: 0.75, keepTurns: 2, enabled: true } as const;

/** The endpoint a provider uses when the actor names no baseUrl. */
export const DEFAULT_BASE_URLS: Readonly<Partial<Record<ActorProvider, string>>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
};

/** Where an LLM actor's requests go: its baseUrl, or its provider's default ('' for builtin). */
export const actorEndpoint = (a: Pick<ActorDefinition, 'provider' | 'baseUrl'>): string =>
  a.baseUrl ?? DEFAULT_BASE_URLS[a.provider] ?? '';

/** Whether the actor names a key (a local endpoint such as Ollama may need none). */
export const namesApiKey = (a: Pick<ActorDefinition, 'apiKeyEnv' | 'apiKeyFile' | 'apiKeySecret'>): boolean =>
  a.apiKeyEnv !== undefined || a.apiKeyFile !== undefined || a.apiKeySecret !== undefined;

/** The name of a secret in a namespace's secret store (`agents secret set NAME`). */
export const SecretName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,127}$/, 'must be a secret name: a letter, then letters, digits, - and _');

/** Fallback actors an actor may list. */
export const MAX_FALLBACKS = 5;

/** How many of a session's newest turns a compaction keeps verbatim (an actor's setting, or `session compact --keep`). */
export const KeepTurns = z
  .number()
  .int('must be an integer')
  .min(0, 'must be between 0 and 50')
  .max(50, 'must be between 0 and 50');

export const ActorDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    provider: z.enum(ACTOR_PROVIDERS, { message: `must be one of ${ACTOR_PROVIDERS.join(', ')}` }),
    model: z.string().min(1, 'is required').max(200),
    baseUrl: z
      .string()
      .url('must be an absolute URL')
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
      .optional(),
    /** The environment variable holding the API key (of the server process). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name')
      .optional(),
    /** A file holding the API key; it must be readable by its owner only (mode 0600 or 0400). */
    apiKeyFile: AbsolutePath.optional(),
    /** A secret of the actor's own namespace holding the API key (`agents secret set NAME`). */
    apiKeySecret: SecretName.optional(),
    systemPrompt: z.string().max(100_000).optional(),
    temperature: z.number().min(0, 'must be between 0 and 2').max(2, 'must be between 0 and 2').optional(),
    maxTokens: z.number().int('must be an integer').positive('must be positive').optional(),
    /** The model's context window in tokens: the history sent is trimmed to fit it. */
    contextWindow: z
      .number()
      .int('must be an integer')
      .min(256, 'must be at least 256')
      .max(10_000_000, 'is at most 10000000')
      .optional(),
    timeoutSeconds: z.number().positive('must be positive').max(3600, 'is at most 3600').optional(),
    maxRetries: z
      .number()
      .int('must be an integer')
      .min(0, 'must be between 0 and 10')
      .max(10, 'must be between 0 and 10')
      .optional(),
    maxToolSteps: z
      .number()
      .int('must be an integer')
      .min(1, 'must be between 1 and 1000')
      .max(1000, 'must be between 1 and 1000')
      .optional(),
    /**
     * Prices per million tokens (in `currency`, default USD), for the cost of each turn and the
     * plans' `--max-cost`. Input tokens read from or written to the provider's prompt cache are
     * charged at `cacheReadPerMillion` / `cacheWritePerMillion`; absent, as the provider bills them
     * (CACHE_PRICE_FACTORS): Anthropic reads 0.1× and writes 1.25× the input price, OpenAI's cached
     * input 0.5×; an openai-compatible endpoint's cached input at the input price.
     */
    prices: z
      .object({
        inputPerMillion: z.number().nonnegative('must not be negative'),
        outputPerMillion: z.number().nonnegative('must not be negative'),
        cacheReadPerMillion: z
          .number()
          .nonnegative('must not be negative')
          .describe(
            'the price of a million input tokens read from the prompt cache (default: anthropic 0.1×, openai 0.5×, openai-compatible 1× inputPerMillion)',
          )
          .optional(),
        cacheWritePerMillion: z
          .number()
          .nonnegative('must not be negative')
          .describe(
            'the price of a million input tokens written to the prompt cache (default: anthropic 1.25× inputPerMillion; others report no writes)',
          )
          .optional(),
        currency: z
          .string()
          .regex(/^[A-Z]{3}$/, 'must be a currency code such as USD')
          .optional(),
      })
      .strict()
      .optional(),
    skills: z.array(Ref).optional(),
    tools: z.array(Ref).optional(),
    unsafe: z.boolean().optional(),
    /** When a session's earlier turns are summarised so it stays within the window (see COMPACTION_DEFAULTS). */
    compaction: z
      .object({
        /** The fraction of contextWindow the earlier turns may fill before they are compacted. */
        threshold: z
          .number()
          .min(0.1, 'must be between 0.1 and 0.95')
          .max(0.95, 'must be between 0.1 and 0.95')
          .optional(),
        /** The newest turns kept verbatim. */
        keepTurns: KeepTurns.optional(),
        /** The LLM actor that writes the summary (default: this actor). */
        summarizer: Ref.optional(),
        enabled: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** Actors whose models answer, in order, when this one's fails (rate limit, 5xx, timeout, network, 404 model). */
    fallbacks: z
      .array(Ref)
      .max(MAX_FALLBACKS, `lists at most ${MAX_FALLBACKS} actors`)
      .refine((f) => new Set(f).size === f.length, 'names an actor twice')
      .optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.provider === 'openai-compatible' && a.baseUrl === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'an openai-compatible actor needs baseUrl (e.g. http://127.0.0.1:11434/v1 for Ollama)',
      });
    const keys = (['apiKeyEnv', 'apiKeyFile', 'apiKeySecret'] as const).filter((f) => a[f] !== undefined);
    if (keys.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: [keys[1] ?? 'apiKeyFile'],
        message: 'give one of apiKeyEnv, apiKeyFile and apiKeySecret, not several',
      });
    if (a.provider === 'builtin')
      for (const f of ['baseUrl', 'apiKeyEnv', 'apiKeyFile', 'apiKeySecret', 'prices', 'fallbacks'] as const)
        if (a[f] !== undefined)
          ctx.addIssue({ code: 'custom', path: [f], message: 'a builtin actor calls no endpoint: leave it out' });
  });
export type ActorDefinition = z.infer<typeof ActorDefinition>;

export const TOOL_SOURCE = /^(builtin|command|mcp:[a-z][a-z0-9_-]*)$/;
export const ToolDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    source: z.string().regex(TOOL_SOURCE, 'must be builtin, command or mcp:<server>'),
    command: z
      .object({
        program: z.string().min(1),
        args: z.array(z.string()).optional(),
        timeoutMs: z.number().int().positive().max(3_600_000).optional(),
      })
      .strict()
      .optional(),
    /** source mcp:<server>: the server's name of the tool (default: the last segment of name). */
    mcpTool: z.string().min(1).max(200).optional(),
    inputSchema: JsonSchemaObject,
    readOnly: z.boolean(),
    writes: z.boolean(),
    checkpoint: z.boolean().optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.readOnly && t.writes)
      ctx.addIssue({ code: 'custom', path: ['writes'], message: 'a read-only tool cannot write' });
    if (t.source === 'command' && !t.command)
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'a command tool needs command.program' });
    if (t.source !== 'command' && t.command)
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'only source: command takes a command' });
    if (t.mcpTool !== undefined && !t.source.startsWith('mcp:'))
      ctx.addIssue({ code: 'custom', path: ['mcpTool'], message: 'only source: mcp:<server> takes mcpTool' });
  });
export type ToolDefinition = z.infer<typeof ToolDefinition>;

const McpServerName = z.string().regex(/^[a-z][a-z0-9_-]*$/, 'must be lowercase letters, digits, - and _');
const McpTimeouts = {
  /** How long connecting (and listing its tools) may take, in seconds (default 20). */
  connectTimeoutSeconds: z.number().positive().max(600, 'is at most 600').optional(),
  /** How long one tool call may take, in seconds (default 60). */
  callTimeoutSeconds: z.number().positive().max(3600, 'is at most 3600').optional(),
};

/**
 * An MCP server a skill brings: a program spoken to over stdio (`command`), or a streamable-HTTP
 * endpoint (`url`). Its tools are offered as `mcp:<name>/<tool>`.
 */
export const McpServer = z.union(
  [
    z
      .object({
        name: McpServerName,
        command: z.string().min(1),
        args: z.array(z.string()).optional(),
        /** Variables the server sees besides a minimal PATH/HOME (never the agent's own environment). */
        env: z.record(z.string(), z.string()).optional(),
        /** Its working directory (absolute; default: the agent's). */
        cwd: AbsolutePath.optional(),
        ...McpTimeouts,
      })
      .strict(),
    z
      .object({
        name: McpServerName,
        url: z
          .string()
          .url('must be an absolute URL')
          .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
        /** HTTP headers sent with every request (e.g. an Authorization header). */
        headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name'), z.string()).optional(),
        ...McpTimeouts,
      })
      .strict(),
  ],
  { message: 'an MCP server needs command (stdio) or url (streamable HTTP), with name' },
);
export type McpServer = z.infer<typeof McpServer>;

export const SkillDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    tools: z.array(Ref).optional(),
    includes: z.array(Ref).optional(),
    mcpServers: z.array(McpServer).optional(),
    instructions: z.string().max(100_000).optional(),
  })
  .strict();
export type SkillDefinition = z.infer<typeof SkillDefinition>;

export const RESOURCE_TYPES = ['git-checkout', 'fs-directory'] as const;
/**
 * A resource's directory: absolute, or (on a server) relative to its namespace's workspace. Where
 * it may lie is the registry's to check (domain/registry/capabilities.ts).
 */
const ResourcePath = z
  .string()
  .min(1, 'is required')
  .max(4096, 'is at most 4096 characters')
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character');
export const ResourceDefinition = z.discriminatedUnion('type', [
  z
    .object({
      name: EntityName,
      description: Description.optional(),
      type: z.literal('git-checkout'),
      path: ResourcePath,
      branch: z
        .string()
        .regex(/^[A-Za-z0-9._/-]+$/, 'must be a branch name')
        .optional(),
    })
    .strict(),
  z
    .object({
      name: EntityName,
      description: Description.optional(),
      type: z.literal('fs-directory'),
      path: ResourcePath,
    })
    .strict(),
]);
export type ResourceDefinition = z.infer<typeof ResourceDefinition>;

/** The built-in profiles' short names: `manual` means `builtin/manual` wherever a profile is named. */
export const BUILTIN_PROFILE_NAMES = ['manual', 'trusted', 'auto'] as const;
/** A profile named in a project or a plan: a built-in's short name, or namespace/name (bare: local/). */
export const ProfileRef = z.union([z.enum(BUILTIN_PROFILE_NAMES), EntityName]);

/** The automation profile entity a reference names (`manual` → `builtin/manual`). */
export function profileEntityName(ref: string): string {
  return (BUILTIN_PROFILE_NAMES as readonly string[]).includes(ref) ? `builtin/${ref}` : ref;
}

const Invariant = z.string().trim().min(1, 'must not be empty').max(1000, 'at most 1000 characters');

/** A command run in a plan's sandbox at the end of execute: exit 0 means the definition of done is met. */
export const VerifyCommand = z
  .object({
    /** A command line, split like a shell would (never run by one): `npm test`. */
    command: z.string().trim().min(1, 'must not be empty').max(2000),
    timeoutSeconds: z.number().int().min(1).max(3600).optional(),
  })
  .strict();
export type VerifyCommand = z.infer<typeof VerifyCommand>;

export const ProjectDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    resources: z.array(Ref).min(1, 'a project needs at least one resource'),
    settings: z
      .object({
        strategyActor: Ref.optional(),
        executionActor: Ref.optional(),
        automationProfile: ProfileRef.optional(),
        /** Whether the plan's commands may reach the network (overrides the action's choice). */
        network: z.enum(['none', 'allow']).optional(),
        /** What its plans' and chats' actors see (domain/context/context.ts). */
        context: ProjectContextSettings.optional(),
        /** Rules every plan on the project must keep (given to its actors). */
        invariants: z.array(Invariant).max(50, 'at most 50 invariants').optional(),
        /** The command that checks a plan's work (its exit status is the definition of done). */
        verify: VerifyCommand.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type ProjectDefinition = z.infer<typeof ProjectDefinition>;

const ArgumentSpec = z
  .object({
    type: z.enum(['string', 'number', 'integer', 'boolean']),
    description: z.string().optional(),
    default: z.union([z.string(), z.number(), z.boolean()]).optional(),
    required: z.boolean().optional(),
    enum: z
      .array(z.union([z.string(), z.number()]))
      .min(1)
      .optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const d = a.default;
    if (d === undefined) return;
    const ok =
      a.type === 'string'
        ? typeof d === 'string'
        : a.type === 'boolean'
          ? typeof d === 'boolean'
          : typeof d === 'number' && (a.type === 'number' || Number.isInteger(d));
    if (!ok) ctx.addIssue({ code: 'custom', path: ['default'], message: `must be a ${a.type}` });
  });

export const ActionStep = z
  .object({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9_-]*$/, 'must be lowercase letters, digits, - and _')
      .optional(),
    description: z.string().optional(),
    tool: Ref,
    args: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const ActionDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    arguments: z
      .record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'argument names are identifiers'), ArgumentSpec)
      .optional(),
    descriptionTemplate: z.string().min(1, 'is required'),
    definitionOfDone: z.string().min(1, 'is required'),
    strategyActor: Ref.optional(),
    executionActor: Ref.optional(),
    invariants: z.array(Invariant).max(50, 'at most 50 invariants').optional(),
    /** The command that checks a plan's work (a project's verify takes precedence). */
    verify: VerifyCommand.optional(),
    steps: z.array(ActionStep).optional(),
    /** Whether its commands need the network (default none; a project's setting overrides it). */
    network: z.enum(['none', 'allow']).optional(),
    /** Variables its commands see (they never see the server's environment). */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string())
      .optional(),
    /** Instruction files its plans' actors read too, relative to a resource root of the project. */
    instructions: z.array(InstructionPath).max(50, 'at most 50 files').optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const declared = new Set(Object.keys(a.arguments ?? {}));
    const check = (text: string, path: (string | number)[]): void => {
      for (const m of text.matchAll(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g)) {
        if (!declared.has(m[1] ?? ''))
          ctx.addIssue({ code: 'custom', path, message: `uses {{${m[1]}}}, which is not a declared argument` });
      }
    };
    check(a.descriptionTemplate, ['descriptionTemplate']);
    check(a.definitionOfDone, ['definitionOfDone']);
    a.steps?.forEach((s, i) => check(JSON.stringify(s.args ?? {}), ['steps', i, 'args']));
  });
export type ActionDefinition = z.infer<typeof ActionDefinition>;

/** What a plan's tool calls may do without a person, and whether its apply asks (see domain/plan/policy.ts). */
export const AutomationProfileDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    default: z.enum(POLICY_DECISIONS, { message: 'must be allow, ask or deny' }),
    applyApproval: z.boolean().optional(),
    rules: z.array(PolicyRule).max(200, 'at most 200 rules').optional(),
  })
  .strict();
export type AutomationProfileDefinition = z.infer<typeof AutomationProfileDefinition>;

export { HookDefinition };

export const DEFINITION_SCHEMAS = {
  actor: ActorDefinition,
  tool: ToolDefinition,
  skill: SkillDefinition,
  resource: ResourceDefinition,
  project: ProjectDefinition,
  action: ActionDefinition,
  'automation-profile': AutomationProfileDefinition,
  hook: HookDefinition,
} as const;

export type Definition =
  | ActorDefinition
  | ToolDefinition
  | SkillDefinition
  | ResourceDefinition
  | ProjectDefinition
  | ActionDefinition
  | AutomationProfileDefinition
  | HookDefinition;

/** A reference from one entity to another, with where it is written. */
export interface Reference {
  kind: RegistryKind;
  name: string;
  path: (string | number)[];
}

/** The entities a definition refers to. */
export function referencesOf(kind: RegistryKind, d: Definition): Reference[] {
  const refs: Reference[] = [];
  const add = (k: RegistryKind, names: string[] | undefined, path: string): void =>
    names?.forEach((name, i) => refs.push({ kind: k, name, path: [path, i] }));
  const one = (k: RegistryKind, name: string | undefined, path: (string | number)[]): void => {
    if (name) refs.push({ kind: k, name, path });
  };
  switch (kind) {
    case 'actor': {
      const a = d as ActorDefinition;
      add('skill', a.skills, 'skills');
      add('tool', a.tools, 'tools');
      one('actor', a.compaction?.summarizer, ['compaction', 'summarizer']);
      add('actor', a.fallbacks, 'fallbacks');
      break;
    }
    case 'skill': {
      const s = d as SkillDefinition;
      add('tool', s.tools, 'tools');
      add('skill', s.includes, 'includes');
      break;
    }
    case 'project': {
      const p = d as ProjectDefinition;
      add('resource', p.resources, 'resources');
      one('actor', p.settings?.strategyActor, ['settings', 'strategyActor']);
      one('actor', p.settings?.executionActor, ['settings', 'executionActor']);
      const profile = p.settings?.automationProfile;
      if (typeof profile === 'string')
        one('automation-profile', profileEntityName(profile), ['settings', 'automationProfile']);
      break;
    }
    case 'action': {
      const a = d as ActionDefinition;
      one('actor', a.strategyActor, ['strategyActor']);
      one('actor', a.executionActor, ['executionActor']);
      a.steps?.forEach((s, i) => one('tool', s.tool, ['steps', i, 'tool']));
      break;
    }
    case 'hook':
      one('project', (d as HookDefinition).project, ['project']);
      break;
    default:
      break;
  }
  return refs;
}

/** A stored definition with its bookkeeping. */
export interface RegistryEntity<D extends Definition = Definition> {
  kind: RegistryKind;
  name: string;
  namespace: string;
  revision: number;
  contentHash: string;
  createdAt: string;
  updatedAt: string;
  builtin: boolean;
  definition: D;
}
