/** What every tool-calling loop (chat turns, plan phases) does with a model's tool call. */

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
    return { ok: false, value: text, problem: (err as Error).message };
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

/** The cost of a number of tokens at an actor's prices (undefined: it has none). */
export function costOf(
  prices: { inputPerMillion: number; outputPerMillion: number; currency?: string | undefined } | undefined,
  usage: { inputTokens: number; outputTokens: number },
): { amount: number; currency: string } | undefined {
  if (!prices) return undefined;
  const amount =
    (usage.inputTokens * prices.inputPerMillion + usage.outputTokens * prices.outputPerMillion) / 1_000_000;
  return { amount: Math.round(amount * 1e6) / 1e6, currency: prices.currency ?? 'USD' };
}
