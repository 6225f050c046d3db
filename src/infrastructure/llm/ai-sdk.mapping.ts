/**
 * Between our model vocabulary and the AI SDK's provider spec (v4, the AI SDK 7 line): a step's
 * request as the call options of `doStream`, and the parts it streams back as ModelEvents. The
 * types come from the provider package's own `languageModel()`, so nothing here loads the SDK.
 */
import type { createAnthropic } from '@ai-sdk/anthropic';
import { LLM_ACTOR_DEFAULTS, type ActorDefinition } from '../../domain/registry/entities.ts';
import type { FinishReason, ModelEvent, ModelMessage, ModelRequest } from '../../application/index.ts';
import { streamError } from './provider-failures.ts';

/** What `languageModel()` / `chatModel()` of the provider packages make. */
export type ProviderModel = ReturnType<ReturnType<typeof createAnthropic>['languageModel']>;
type CallOptions = Parameters<ProviderModel['doStream']>[0];
type StreamPart = Awaited<ReturnType<ProviderModel['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type Prompt = CallOptions['prompt'];

/** The call options of one step (the abort signal is the attempt's, added per attempt). */
export function callOptions(req: ModelRequest): Omit<CallOptions, 'abortSignal'> {
  const prompt: Prompt = [];
  if (req.system !== undefined && req.system !== '') prompt.push({ role: 'system', content: req.system });
  for (const m of req.messages) prompt.push(toPromptMessage(m));
  const options: Omit<CallOptions, 'abortSignal'> = {
    prompt,
    maxOutputTokens: req.actor.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens,
  };
  if (req.actor.temperature !== undefined) options.temperature = req.actor.temperature;
  if (req.tools.length > 0) {
    options.tools = req.tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
    options.toolChoice = { type: req.toolChoice ?? 'auto' };
  }
  return options;
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
        usage: {
          inputTokens: part.usage.inputTokens.total ?? 0,
          outputTokens: part.usage.outputTokens.total ?? 0,
        },
      };
    case 'error':
      throw streamError(part.error, actor);
    default:
      return undefined;
  }
}
