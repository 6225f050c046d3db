/**
 * What the LLM phases of a plan share: the plan's actor (its definition and key), one streamed model
 * step with the plan's usage and cost counted, and the tools an actor may call in the plan — the
 * built-in file tools plus the actor's own command tools, each run by the ToolRunner inside the
 * plan's sandbox (or, read-only, in the project's directory while strategizing).
 */
import type { Tracer } from '../../ports/tracer.port.ts';
import type { PlanError } from '../../../domain/plan/plan.ts';
import { apiKeyFix } from '../../actors/llm/api-key-fix.ts';
import { LLM_ACTOR_DEFAULTS, namesApiKey, type ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { type ToolDefinition } from '../../../domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS, CODING_TOOLS } from '../../../domain/registry/builtins.ts';
import type { ContextProvider } from '../../context/context.types.ts';
import {
  ProviderFailure,
  type ApiKeys,
  type LanguageModels,
  type ModelTool,
  type ModelUsage,
  type SchemaValidator,
  type TokenCounter,
} from '../../ports/language-model.port.ts';
import type { TranscriptStore } from '../../ports/transcript.port.ts';
import { uniqueModelName } from '../../actors/llm/chat-toolbox.service.ts';
import { costOf } from '../../actors/llm/tool-args.ts';
import { ModelCandidates } from '../../actors/llm/model-candidates.service.ts';
import type { FallbackRecord } from '../../../domain/registry/fallbacks.ts';
import type { AgentModel } from '../../agent/agent.types.ts';

/** What plans need to run LLM actors (absent from the engine: plans from a goal are refused). */
export interface PlanLlmDeps {
  models: LanguageModels;
  keys: ApiKeys;
  tokens: TokenCounter;
  validator: SchemaValidator;
  context: ContextProvider;
  /** Where an execution waiting for an approval keeps its conversation (by the execute task's id). */
  transcripts: TranscriptStore;
  /** Spans for the phases' model and tool calls (absent: none). */
  tracer?: Tracer | undefined;
}

/** A failure of the plan's actor, as the plan error that stops the phase. */
export class PlanActorFailure extends Error {
  readonly error: PlanError;

  constructor(error: PlanError) {
    super(error.message);
    this.error = error;
    this.name = 'PlanActorFailure';
  }
}

/**
 * How a phase hears of fallbacks, what an earlier part of its task recorded (its task's
 * `metadata.fallbacks`), and whose per-user limits its steps' tokens count toward.
 */
export interface PlanFallbacks {
  /** Told when a step fell back: every fallback record so far and a sentence saying who answers now. */
  report: (records: FallbackRecord[], text: string) => Promise<void>;
  /** The records of the phase's task so far: the phase goes on with the fallback that answered. */
  earlier?: readonly FallbackRecord[] | undefined;
  /** Who started the phase (its task's turn: ActorTurn.by); absent: nobody's. */
  spender?: string | undefined;
}

/**
 * A plan's LLM actor: one model step at a time, each step's tokens and cost added to the plan's
 * usage; a step its model fails goes to the actor's fallbacks (ModelCandidates), reported as it happens.
 */
export class PlanModel {
  private readonly candidates: ModelCandidates;

  readonly name: string;
  readonly def: ActorDefinition;
  private readonly deps: PlanLlmDeps;

  private constructor(
    name: string,
    def: ActorDefinition,
    apiKey: string | undefined,
    deps: PlanLlmDeps,
    lookup: (name: string) => Promise<ActorDefinition | undefined>,
    onFallback: PlanFallbacks['report'] | undefined,
    spender: string | undefined,
  ) {
    this.name = name;
    this.def = def;
    this.deps = deps;
    this.candidates = new ModelCandidates(
      { name, def, apiKey },
      { models: deps.models, keys: deps.keys, lookup, onFallback, spender },
    );
  }

  /** The actor named `name`, with its key; a missing actor, a built-in one or a missing key is a PlanActorFailure. */
  static async open(
    name: string,
    lookup: (name: string) => Promise<ActorDefinition | undefined>,
    deps: PlanLlmDeps,
    fallbacks?: PlanFallbacks,
  ): Promise<PlanModel> {
    const def = await lookup(name);
    if (!def)
      throw new PlanActorFailure({
        kind: 'actor',
        message: `actor ${name} no longer exists`,
        recoverable: true,
        hint: 'register it again (agents actor add), or make a new plan with --actor NAME',
      });
    if (def.provider === 'builtin')
      throw new PlanActorFailure({
        kind: 'actor',
        message: `actor ${name} is a built-in deterministic actor: it cannot plan or carry out a goal`,
        recoverable: false,
        hint: 'choose an LLM actor (provider openai-compatible, openai or anthropic) with --actor NAME',
      });
    const key = await deps.keys.resolve(def);
    if (!key.present && namesApiKey(def))
      throw new PlanActorFailure({
        kind: 'actor',
        message: `No API key for ${name}: ${key.problem}`,
        recoverable: true,
        hint: `${apiKeyFix(def)}, then run the phase again`,
      });
    const apiKey = key.present ? key.key : undefined;
    const model = new PlanModel(name, def, apiKey, deps, lookup, fallbacks?.report, fallbacks?.spender);
    await model.candidates.resume(fallbacks?.earlier ?? []);
    return model;
  }

  get contextWindow(): number {
    return this.def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
  }

  get maxTokens(): number {
    return this.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens;
  }

  /**
   * The actor as the agent loop's model: its steps streamed through its fallbacks; a provider
   * failure becomes a PlanActorFailure (cancelled: rethrown as it is). Usage is counted by the
   * loop's budget (PlanBudget), with `cost`.
   */
  /** Where the phase's loop reports its spans. */
  get tracer(): Tracer | undefined {
    return this.deps.tracer;
  }

  agentModel(): AgentModel {
    const { candidates, name } = this;
    return {
      name,
      provider: this.def.provider,
      modelId: this.def.model,
      count: (text) => this.deps.tokens.count(text),
      async *stream(req) {
        try {
          yield* candidates.stream(req);
        } catch (err) {
          if (err instanceof ProviderFailure && err.kind !== 'cancelled')
            throw new PlanActorFailure({
              kind: 'actor',
              message: `${name} failed: ${err.message}`,
              recoverable: true,
              hint: `${err.hint}; then run the phase again`,
            });
          throw err;
        }
      },
    };
  }

  /** A step's cost at the prices of the model that answered it (a fallback's, after a fallback). */
  cost(usage: ModelUsage): number | undefined {
    const answered = this.candidates.current.def;
    return costOf(answered.prices, usage, answered.provider)?.amount;
  }

  validate(schema: Record<string, unknown>, value: unknown): string[] {
    return this.deps.validator.validate(schema, value);
  }
}

/** A tool a plan's actor may call: its definition and its name for the model. */
export interface PlanTool {
  ref: string;
  modelName: string;
  def: ToolDefinition;
}

export interface PlanToolSet {
  tools: PlanTool[];
  offered: ModelTool[];
  byModelName: ReadonlyMap<string, PlanTool>;
  /** Tools the actor names that a plan cannot offer, and why. */
  problems: string[];
}

/**
 * The built-in tools every plan actor gets (the strategy actor only the read-only ones): the coding
 * tools a chat has, the git views, and run-command (no shell: what actions and verify run). The
 * older file tools stay for actors and actions that name them.
 */
const PLAN_BUILTIN_NAMES = [...CODING_TOOLS, 'builtin/run-command', 'builtin/git-status', 'builtin/git-diff'];
const PLAN_BUILTINS = BUILTIN_TOOLS.filter((t) => PLAN_BUILTIN_NAMES.includes(t.name));

/**
 * The tools of a plan's actor: the built-in file, search, command and git tools, and the actor's
 * own `command` tools (MCP tools are not offered to plans: their effects cannot be checkpointed).
 * `readOnly`: only the tools that only read (strategize).
 */
export async function planToolsOf(
  actor: ActorDefinition,
  lookup: (name: string) => Promise<ToolDefinition | undefined>,
  readOnly: boolean,
): Promise<PlanToolSet> {
  const problems: string[] = [];
  const defs: ToolDefinition[] = [...PLAN_BUILTINS];
  for (const name of actor.tools ?? []) {
    if (defs.some((d) => d.name === name)) continue;
    const def = await lookup(name);
    if (!def) problems.push(`tool ${name} is not registered`);
    else if (def.source.startsWith('mcp:'))
      problems.push(`tool ${name} is an MCP tool: plans offer only built-in and command tools`);
    else defs.push(def);
  }
  const taken = new Set<string>();
  const tools = defs
    .filter((d) => !readOnly || d.readOnly)
    .map((def) => ({ ref: def.name, modelName: uniqueModelName(def.name, taken), def }));
  return {
    tools,
    offered: tools.map((t) => ({
      name: t.modelName,
      description: t.def.description ?? t.ref,
      inputSchema: t.def.inputSchema,
    })),
    byModelName: new Map(tools.map((t) => [t.modelName, t])),
    problems,
  };
}
