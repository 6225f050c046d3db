/** What every tool-calling loop (chat turns, plan phases) does with a model's tool call. */
import {
  CACHE_PRICE_FACTORS,
  type ActorDefinition,
  type ActorProvider,
} from '../../../domain/registry/actor.definition.ts';
import { messageOf } from '../../../domain/errors.ts';

/** How much of a tool's output the model is given (characters). */
export const MAX_RESULT_FOR_MODEL = 32_000;

/** The arguments a model wrote, parsed: a JSON object, or why not. */
export function parseArgs(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; value: string; problem: string } {
  const raw = text.trim() === '' ? '{}' : text;
  try {
    const v: unknown = JSON.parse(raw);
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      return { ok: false, value: text, problem: 'the arguments must be a JSON object' };
    return { ok: true, value: v as Record<string, unknown> };
  } catch (err) {
    return { ok: false, value: text, problem: messageOf(err) };
  }
}

/** A tool's output cut to what the model is given, saying how much was left out. */
export function capForModel(s: string): string {
  if (s.length <= MAX_RESULT_FOR_MODEL) return s;
  return `${s.slice(0, MAX_RESULT_FOR_MODEL)}\n… [${s.length - MAX_RESULT_FOR_MODEL} more characters not shown]`;
}

/**
 * What the model is told of a tool call that ran: its output (or, empty, its summary); for a failed
 * one the summary first, then any output — capped (capForModel). `id`/`name` answer the model's call.
 */
export function resultForModel(
  call: { id: string; name: string },
  outcome: { ok: boolean; summary: string; output: string },
): { id: string; name: string; output: string; isError: boolean } {
  const text = outcome.ok
    ? outcome.output || outcome.summary
    : `${outcome.summary}${outcome.output ? `\n${outcome.output}` : ''}`;
  return { id: call.id, name: call.name, output: capForModel(text), isError: !outcome.ok };
}

/** An actor's `prices` (ActorDefinition.prices). */
export type Prices = NonNullable<ActorDefinition['prices']>;

/** The tokens a cost is computed from: every input token, and of them those the prompt cache read or wrote. */
export interface CostUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
}

/**
 * The cost of a number of tokens at an actor's prices (undefined: it has none). Input the prompt
 * cache read or wrote is charged at the cache prices, the rest at the input price; a cache price
 * the actor leaves out is the provider's multiple of its input price (CACHE_PRICE_FACTORS), and,
 * without the provider, the input price itself (never less than was spent).
 */
export function costOf(
  prices: Prices | undefined,
  usage: CostUsage,
  provider?: ActorProvider,
): { amount: number; currency: string } | undefined {
  if (!prices) return undefined;
  const factors = provider ? CACHE_PRICE_FACTORS[provider] : { read: 1, write: 1 };
  const read = Math.max(0, usage.cacheReadTokens ?? 0);
  const write = Math.max(0, usage.cacheWriteTokens ?? 0);
  const uncached = Math.max(0, usage.inputTokens - read - write);
  const readPrice = prices.cacheReadPerMillion ?? prices.inputPerMillion * factors.read;
  const writePrice = prices.cacheWritePerMillion ?? prices.inputPerMillion * factors.write;
  const amount =
    (uncached * prices.inputPerMillion +
      read * readPrice +
      write * writePrice +
      usage.outputTokens * prices.outputPerMillion) /
    1_000_000;
  return { amount: Math.round(amount * 1e6) / 1e6, currency: prices.currency ?? 'USD' };
}
