/**
 * What the application needs of an LLM provider: one model step, streamed, in a provider-neutral
 * vocabulary. The tool-calling loop (application/actors/llm.actor.ts) owns everything around it —
 * history, tools, approvals, usage — so that the provider adapter only speaks HTTP.
 */
import type { ActorDefinition } from '../../domain/registry/actor.definition.ts';

/** A tool call as the model wrote it. */
export interface ModelToolCall {
  /** The provider's id of the call (answered by the result with the same id). */
  id: string;
  /** The tool's name as offered to the model (see ModelTool.name). */
  name: string;
  /** The arguments exactly as the model wrote them: JSON text, possibly malformed. */
  arguments: string;
}

export interface ModelToolResult {
  id: string;
  name: string;
  /** What the model is told: the tool's output, or the error. */
  output: string;
  isError: boolean;
}

/** One message of a conversation as a model sees it. */
export type ModelMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls?: ModelToolCall[] | undefined }
  | { role: 'tool'; results: ModelToolResult[] };

/** A tool offered to the model. */
export interface ModelTool {
  /** `^[a-zA-Z0-9_-]{1,64}$` (what every provider accepts). */
  name: string;
  description: string;
  /** A JSON Schema of an object. */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  /** The actor: provider, model, baseUrl, temperature, maxTokens, timeoutSeconds, maxRetries. */
  actor: ActorDefinition;
  /** The key (absent: the request goes without one, as a local server may allow). */
  apiKey?: string | undefined;
  system?: string | undefined;
  messages: ModelMessage[];
  tools: ModelTool[];
  /**
   * How many leading messages the next request will send again unchanged (the earlier turns of
   * the conversation): a provider with prompt caching marks the end of that stable head (and of
   * the system prompt and tools) as cache breakpoints. Absent or 0: only system and tools.
   */
  stableMessages?: number | undefined;
  /** `none`: the tools stay offered (their calls are in the history) but the model must answer in words. */
  toolChoice?: 'auto' | 'none' | undefined;
  /** Aborting it aborts the HTTP request at once (the stream then ends with a `cancelled` failure). */
  signal: AbortSignal;
  /**
   * The actor's namespace holds the private-network capability (or this is local mode): the
   * endpoint may be a loopback or private address. Absent or false: every connection passes the
   * server's egress guard (internal addresses refused unless allowlisted).
   */
  privateNetwork?: boolean | undefined;
  /**
   * The user whose per-user limits the step's tokens count toward: who sent the turn's message or
   * started the plan phase (absent: nobody's, e.g. the local user).
   */
  spender?: string | undefined;
}

/** How an endpoint check may connect (see ModelRequest.privateNetwork). */
export interface EndpointAccess {
  privateNetwork?: boolean | undefined;
}

export interface ModelUsage {
  /** Every input token, cached or not (cache reads and writes included). */
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those read from the provider's prompt cache (absent: not reported). */
  cacheReadTokens?: number | undefined;
  /** Of the input tokens, those written to the provider's prompt cache (absent: not reported). */
  cacheWriteTokens?: number | undefined;
}

export type FinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'other';

/** What a step streams: text as it arrives, then its tool calls, then `finish` (exactly once, last). */
export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: ModelToolCall }
  | { type: 'finish'; reason: FinishReason; usage: ModelUsage };

export const PROVIDER_FAILURES = [
  /** 401/403: the key is wrong, missing or lacks access. */
  'auth',
  /** 404: the model (or the endpoint path) does not exist. */
  'model-not-found',
  /** 429 after the retries (Retry-After honoured). */
  'rate-limit',
  /** 5xx after the retries. */
  'server',
  /** Connection refused, DNS, reset. */
  'network',
  /** No answer (or no next chunk) within timeoutSeconds. */
  'timeout',
  /** The prompt does not fit the model's window. */
  'context-window',
  /** Any other 4xx: the endpoint refused the request. */
  'bad-request',
  /** The request was aborted by the caller's signal. */
  'cancelled',
  /** The answer could not be read (not the provider's API). */
  'protocol',
] as const;
export type ProviderFailureKind = (typeof PROVIDER_FAILURES)[number];

/** Why a model step failed, for a user: what happened and what to do. */
export class ProviderFailure extends Error {
  readonly kind: ProviderFailureKind;
  readonly hint: string;
  readonly status?: number | undefined;

  constructor(kind: ProviderFailureKind, message: string, hint: string, status?: number) {
    super(message);
    this.kind = kind;
    this.hint = hint;
    this.status = status;
    this.name = 'ProviderFailure';
  }
}

/** The result of checking an actor's endpoint and key (diagnostics). */
export interface EndpointCheck {
  ok: boolean;
  /** One line: what was found. */
  detail: string;
  hint?: string | undefined;
}

export interface LanguageModels {
  /**
   * One model step, streamed. Text deltas are yielded as the provider sends them (never
   * buffered to the end). Failures throw ProviderFailure — before the first event or mid-stream.
   */
  stream(req: ModelRequest): AsyncIterable<ModelEvent>;
  /** Whether the endpoint answers and takes the key (without generating text where possible). */
  check(
    actor: ActorDefinition,
    apiKey: string | undefined,
    signal: AbortSignal,
    access?: EndpointAccess,
  ): Promise<EndpointCheck>;
}

/** Where an actor's key is, and whether it is there. The key itself never leaves this and the request. */
export type ApiKeyStatus =
  { present: true; key: string; source: string } | { present: false; source?: string | undefined; problem: string };

export interface ApiKeys {
  /** The key of an actor (apiKeyEnv or apiKeyFile); `present: false` when none is configured or found. */
  resolve(actor: ActorDefinition): Promise<ApiKeyStatus>;
}

/** Counts tokens as models do (an encoding close to the provider's); loads its tables on first use. */
export interface TokenCounter {
  count(text: string): Promise<number>;
}

/** Validates a value against a JSON Schema; returns the problems (empty: valid). */
export interface SchemaValidator {
  validate(schema: Record<string, unknown>, value: unknown): string[];
}
