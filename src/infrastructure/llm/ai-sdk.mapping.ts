/**
 * Between our model vocabulary and the AI SDK's provider spec (v4, the AI SDK 7 line): a step's
 * request as the call options of `doStream`, and the parts it streams back as ModelEvents. The
 * types come from the provider package's own `languageModel()`, so nothing here loads the SDK.
 *
 * Anthropic prompt caching: Anthropic caches a prompt's prefix only up to a block marked with
 * `cache_control` (at most 4 marks a request), and bills a read of it at a tenth of the input
 * price. The request marks the three prefixes a tool loop sends again unchanged — the tools, the
 * system prompt, and the stable head of the history (ModelRequest.stableMessages) — through the
 * provider options `@ai-sdk/anthropic` reads (`providerOptions.anthropic.cacheControl`).
 */
import type { createAnthropic } from '@ai-sdk/anthropic';
import { LLM_ACTOR_DEFAULTS, type ActorDefinition } from '../../domain/registry/actor.definition.ts';
import type { FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelUsage } from '../../application/index.ts';
import { streamError } from './provider-failures.ts';

/** What `languageModel()` / `chatModel()` of the provider packages make. */
export type ProviderModel = ReturnType<ReturnType<typeof createAnthropic>['languageModel']>;
type CallOptions = Parameters<ProviderModel['doStream']>[0];
type StreamPart = Awaited<ReturnType<ProviderModel['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type Prompt = CallOptions['prompt'];
type StreamUsage = Extract<StreamPart, { type: 'finish' }>['usage'];

/** Anthropic's cache breakpoint, as the provider package takes it on a message, a part or a tool. */
const CACHE_BREAKPOINT = { anthropic: { cacheControl: { type: 'ephemeral' } } };
/** The most breakpoints Anthropic takes in one request (more is refused; the SDK drops the extra ones). */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The call options of one step (the abort signal is the attempt's, added per attempt). */
export function callOptions(req: ModelRequest): Omit<CallOptions, 'abortSignal'> {
  // Only Anthropic is told where to cache (OpenAI caches prefixes on its own); the OpenAI-compatible
  // package would drop another provider's options anyway, but nothing should rely on that.
  const cache = req.actor.provider === 'anthropic';
  const mark = cache ? { providerOptions: CACHE_BREAKPOINT } : {};
  const head = cache ? stableHeadEnd(req.messages, req.stableMessages ?? 0) : -1;
  const prompt: Prompt = [];
  if (req.system !== undefined && req.system !== '') prompt.push({ role: 'system', content: req.system, ...mark });
  req.messages.forEach((m, i) => prompt.push({ ...toPromptMessage(m), ...(i === head ? mark : {}) }));
  const options: Omit<CallOptions, 'abortSignal'> = {
    prompt,
    maxOutputTokens: req.actor.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens,
  };
  if (req.actor.temperature !== undefined) options.temperature = req.actor.temperature;
  if (req.tools.length > 0) {
    const last = req.tools.length - 1;
    options.tools = req.tools.map((t, i) => ({
      type: 'function' as const,
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      // Anthropic renders the tools first: a mark on the last one caches them all.
      ...(i === last ? mark : {}),
    }));
    options.toolChoice = { type: req.toolChoice ?? 'auto' };
  }
  return options;
}

/**
 * The index of the message that closes the stable head (messages [0, stable) are sent again
 * unchanged next time), or -1. A message with no content blocks cannot hold the mark (the SDK
 * would drop it), so it goes on the nearest earlier one that has some: a shorter cached prefix.
 */
export function stableHeadEnd(messages: readonly ModelMessage[], stable: number): number {
  for (let i = Math.min(stable, messages.length) - 1; i >= 0; i--) if (hasContent(messages[i])) return i;
  return -1;
}

function hasContent(m: ModelMessage | undefined): boolean {
  if (m === undefined) return false;
  switch (m.role) {
    case 'user':
      return m.text !== '';
    case 'assistant':
      return m.text !== '' || (m.toolCalls?.length ?? 0) > 0;
    case 'tool':
      return m.results.length > 0;
  }
}

function toPromptMessage(m: ModelMessage): Prompt[number] {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: [{ type: 'text', text: m.text }] };
    case 'assistant': {
      const content: Extract<Prompt[number], { role: 'assistant' }>['content'] = [];
      if (m.text !== '') content.push({ type: 'text', text: m.text });
      for (const c of m.toolCalls ?? [])
        content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: parseArguments(c.arguments) });
      return { role: 'assistant', content };
    }
    case 'tool':
      return {
        role: 'tool',
        content: m.results.map((r) => ({
          type: 'tool-result' as const,
          toolCallId: r.id,
          toolName: r.name,
          output: r.isError
            ? { type: 'error-text' as const, value: r.output }
            : { type: 'text' as const, value: r.output },
        })),
      };
  }
}

/** A past call's arguments as an object (providers take an object back; malformed ones become {}). */
function parseArguments(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  'tool-calls': 'tool-calls',
  'content-filter': 'content-filter',
};

/** A streamed part as a ModelEvent; undefined for the parts a step does not report. */
export function toEvent(part: StreamPart, actor: ActorDefinition): ModelEvent | undefined {
  switch (part.type) {
    case 'text-delta':
      return part.delta === '' ? undefined : { type: 'text', delta: part.delta };
    case 'tool-call':
      return { type: 'tool-call', call: { id: part.toolCallId, name: part.toolName, arguments: part.input } };
    case 'finish':
      // An answer that stopped without the provider's completion signal (the 7 line's Anthropic
      // model reports it as a finish 'interrupted') may be cut short: it is no finish.
      if (part.finishReason.unified === 'interrupted') return undefined;
      return {
        type: 'finish',
        reason: FINISH[part.finishReason.unified] ?? 'other',
        usage: usageOf(part.usage),
      };
    case 'error':
      throw streamError(part.error, actor);
    default:
      return undefined;
  }
}

/**
 * A step's usage. inputTokens stays every input token; the cache reads and writes are given when
 * the endpoint reported them (the SDK says 0 for a field the answer did not have, so whether it
 * did is read from the raw usage): Anthropic's `cache_read_input_tokens` /
 * `cache_creation_input_tokens`, an OpenAI-compatible endpoint's `prompt_tokens_details.cached_tokens`.
 */
function usageOf(u: StreamUsage): ModelUsage {
  const usage: ModelUsage = { inputTokens: u.inputTokens.total ?? 0, outputTokens: u.outputTokens.total ?? 0 };
  const raw = isRecord(u.raw) ? u.raw : {};
  const details = isRecord(raw['prompt_tokens_details']) ? raw['prompt_tokens_details'] : {};
  if (typeof raw['cache_read_input_tokens'] === 'number' || typeof details['cached_tokens'] === 'number')
    usage.cacheReadTokens = u.inputTokens.cacheRead ?? 0;
  if (typeof raw['cache_creation_input_tokens'] === 'number') usage.cacheWriteTokens = u.inputTokens.cacheWrite ?? 0;
  return usage;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
