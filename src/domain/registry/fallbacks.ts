/**
 * An LLM turn's fallbacks as the task keeps them (`metadata.fallbacks`): each model that failed (or
 * fallback that could not be used), why, and who was tried next — and how people read them.
 */

/** One failed model step, or one fallback skipped, in the order they happened. */
export interface FallbackRecord {
  /** The actor whose model failed (or that was skipped). */
  actor: string;
  /** Its model ('' when the actor does not exist). */
  model: string;
  /** The provider failure (rate-limit, server, timeout, network, model-not-found), or `skipped`. */
  kind: string;
  /** The HTTP status, when the endpoint answered with one. */
  status?: number;
  message: string;
  /** The actor tried next; null when none was left. */
  next: string | null;
}

const REASONS: Record<string, string> = {
  'rate-limit': 'rate limited',
  server: 'server error',
  timeout: 'timed out',
  network: 'unreachable',
  'model-not-found': 'model not found',
  skipped: 'skipped',
};

/** `rate limited (429)`, `timed out`, `skipped`. */
export function fallbackReason(r: { kind: string; status?: number | undefined }): string {
  const word = REASONS[r.kind] ?? r.kind;
  return r.status !== undefined ? `${word} (${r.status})` : word;
}

/** Reads task metadata's `fallbacks` (anything else: none). */
export function fallbacksOf(metadata: Record<string, unknown> | undefined): FallbackRecord[] {
  const f = metadata?.['fallbacks'];
  if (!Array.isArray(f)) return [];
  return f.filter(
    (r): r is FallbackRecord =>
      !!r && typeof r === 'object' && typeof (r as FallbackRecord).actor === 'string' && 'kind' in r,
  );
}

/**
 * `answered by local/b after local/a: rate limited (429)` (`fell back to local/b …` when the turn
 * did not complete), or — every model failed — `no fallback answered: local/a: rate limited (429),
 * local/b: timed out`. Undefined without fallbacks.
 */
export function fallbackLine(records: readonly FallbackRecord[], completed = true): string | undefined {
  const last = records[records.length - 1];
  if (!last) return undefined;
  const why = records.map((r) => `${r.actor}: ${fallbackReason(r)}`).join(', ');
  if (!last.next) return `no fallback answered: ${why}`;
  return `${completed ? 'answered by' : 'fell back to'} ${last.next} after ${why}`;
}
