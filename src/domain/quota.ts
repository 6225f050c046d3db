import { AppError } from './errors.ts';

/**
 * What each user of a server may use: requests per minute, turns running at once, and model tokens
 * per (UTC) day. 0 means no limit.
 */
export interface UsageLimits {
  requestsPerMinute: number;
  concurrentTurns: number;
  tokensPerDay: number;
}

/** A namespace's overrides of the server-wide defaults: a limit left out (or null) is the default's. */
export type LimitOverrides = { [K in keyof UsageLimits]?: number | null | undefined };

export const LIMIT_NAMES: readonly (keyof UsageLimits)[] = ['requestsPerMinute', 'concurrentTurns', 'tokensPerDay'];

/** The highest value a limit may be set to (a larger one is a typo, not a plan). */
export const MAX_LIMIT = 1_000_000_000_000;

/** Every limit off: the defaults of a server started without any. */
export const NO_LIMITS: UsageLimits = Object.freeze({ requestsPerMinute: 0, concurrentTurns: 0, tokensPerDay: 0 });

/** The limits in force: each override that is set, else the default. */
export function effectiveLimits(defaults: UsageLimits, overrides: LimitOverrides | undefined): UsageLimits {
  if (!overrides) return defaults;
  const pick = (k: keyof UsageLimits): number => overrides[k] ?? defaults[k];
  return {
    requestsPerMinute: pick('requestsPerMinute'),
    concurrentTurns: pick('concurrentTurns'),
    tokensPerDay: pick('tokensPerDay'),
  };
}

/** Whether any limit is on. */
export const anyLimit = (l: UsageLimits): boolean =>
  l.requestsPerMinute > 0 || l.concurrentTurns > 0 || l.tokensPerDay > 0;

const WORDS: Record<keyof UsageLimits, string> = {
  requestsPerMinute: 'requests per minute',
  concurrentTurns: 'concurrent turns',
  tokensPerDay: 'model tokens per day',
};

/**
 * The refusal of a request over a limit: BUDGET_EXCEEDED (HTTP 429, -32006 on extension methods),
 * with the limit, its value, the namespace whose limits applied and when to try again
 * (`retryAfterSeconds`, which the HTTP transport also sends as Retry-After).
 */
export function limitExceeded(
  limit: keyof UsageLimits,
  value: number,
  namespace: string,
  retryAfterSeconds: number,
  resetsAt: string | undefined,
): AppError {
  const wait = Math.max(1, Math.ceil(retryAfterSeconds));
  const when =
    limit === 'concurrentTurns'
      ? 'when one of your running turns ends'
      : `at ${resetsAt ?? 'the next window'} (in ${wait} s)`;
  return new AppError(
    'BUDGET_EXCEEDED',
    `Limit of ${value} ${WORDS[limit]} reached (the limits of namespace ${namespace}); it resets ${when}`,
    {
      details: {
        limit,
        value,
        namespace,
        retryAfterSeconds: wait,
        ...(resetsAt !== undefined ? { resetsAt } : {}),
      },
      hint:
        limit === 'concurrentTurns'
          ? `wait for a running turn to end (or cancel one), or ask a server administrator to raise it (agents namespace limits ${namespace} --concurrent-turns N)`
          : `try again in ${wait} s, or ask a server administrator to raise it (agents namespace limits ${namespace})`,
    },
  );
}

/** The seconds a refusal asks the client to wait, when the error is a limit's refusal. */
export function retryAfterOf(err: unknown): number | undefined {
  if (!(err instanceof AppError) || err.reason !== 'BUDGET_EXCEEDED') return undefined;
  const s = err.details['retryAfterSeconds'];
  return typeof s === 'number' && Number.isFinite(s) ? s : undefined;
}
