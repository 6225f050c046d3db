import { randomUUID } from 'node:crypto';
import { LIMIT_SETTINGS, type PayloadLimits } from '../domain/limits.ts';
import { MAX_LIMIT, type UsageLimits } from '../domain/quota.ts';
import type { Logger } from '../application/index.ts';
import type { ServeOptions } from '../presentation/cli/index.ts';
import { StartupError } from './startup-errors.ts';

const MINIMUM: Record<keyof PayloadLimits, number> = {
  maxJsonDepth: 2,
  maxParts: 1,
  maxPartBytes: 1,
  maxMessageBytes: 1,
  maxMetadataKeys: 0,
};

/** The payload limits of `agents serve`: its flags, else the environment; the rest are the defaults. */
export function resolveLimits(opts: ServeOptions, env: NodeJS.ProcessEnv = process.env): Partial<PayloadLimits> {
  const out: Partial<PayloadLimits> = {};
  for (const key of Object.keys(LIMIT_SETTINGS) as Array<keyof PayloadLimits>) {
    const value = opts[key] ?? envInt(LIMIT_SETTINGS[key].env, MINIMUM[key], Number.MAX_SAFE_INTEGER, env);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** A comma-separated environment setting's entries, trimmed, empty ones left out (unset: none). */
export function envList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * A whole-number environment setting in [min, max], or undefined when unset; anything else stops
 * the start with one clear line (see startup-errors.ts).
 */
export function envInt(
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `between ${min} and ${max}`;
    throw new StartupError(
      `${name} must be a whole number ${range} (got ${JSON.stringify(raw.slice(0, 40))})`,
      `set ${name} to a whole number${min === 0 ? ' (0 turns it off)' : ''}, or unset it`,
    );
  }
  return n;
}

/** Each user's limits on a server: the flags, else the environment, else 0 (no limit). */
export function resolveUsageLimits(opts: ServeOptions, env: NodeJS.ProcessEnv = process.env): UsageLimits {
  const max = MAX_LIMIT;
  return {
    requestsPerMinute: opts.rateLimitRpm ?? envInt('CLEVERAGENTS_RATE_LIMIT_RPM', 0, max, env) ?? 0,
    concurrentTurns: opts.maxConcurrentTurns ?? envInt('CLEVERAGENTS_MAX_CONCURRENT_TURNS', 0, max, env) ?? 0,
    tokensPerDay: opts.tokensPerDay ?? envInt('CLEVERAGENTS_TOKENS_PER_DAY', 0, max, env) ?? 0,
  };
}

let installed = false;

/**
 * The last resort: an error that escaped every owner is logged with a correlation id and the
 * server keeps serving the other requests. Each path contains its own failures (and tests prove
 * it without this handler); this only keeps a missed one from ending the process for everyone.
 */
export function installBackstop(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    logger.error(
      { err: reason, correlationId: randomUUID() },
      'unhandled rejection (contained; please report this as a bug)',
    );
  });
  process.on('uncaughtException', (err) => {
    logger.error({ err, correlationId: randomUUID() }, 'uncaught exception (contained; please report this as a bug)');
  });
}
