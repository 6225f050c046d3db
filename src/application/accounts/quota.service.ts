import { AppError } from '../../domain/errors.ts';
import {
  effectiveLimits,
  LIMIT_NAMES,
  limitExceeded,
  MAX_LIMIT,
  type LimitOverrides,
  type UsageLimits,
} from '../../domain/quota.ts';
import type { Principal } from '../ports/principal.ts';
import type { NamespaceLimitsRepository, StoredLimits, UsageCounter } from '../ports/quota.port.ts';
import type { NamespaceRepository } from '../ports/registry.repository.port.ts';
import { namespaceNotFound } from '../registry/namespace.service.ts';
import type { AuditRecorder } from './audit.service.ts';

/** How long namespaces' overrides read from the database are used before they are read again. */
const OVERRIDES_TTL_MS = 15_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** What a refusal for concurrent turns asks the client to wait: a turn's end cannot be foreseen. */
const TURN_RETRY_SECONDS = 10;

export interface QuotaDeps {
  /** The server-wide limits (`agents serve --rate-limit-rpm …`); all 0 in local mode. */
  defaults: UsageLimits;
  usage: UsageCounter;
  limits: NamespaceLimitsRepository;
  namespaces: Pick<NamespaceRepository, 'get'>;
  audit?: AuditRecorder | undefined;
  /** Local mode has one user, who is never limited: its limits cannot be set (default: server). */
  mode?: 'local' | 'server';
  now?: () => number;
  /** How long overrides are cached (another instance's change is seen within it). */
  overridesTtlMs?: number;
}

/** A namespace's limits as `namespace limits get|set` answers them. */
export interface LimitsView {
  namespace: string;
  /** What is in force for each user acting in the namespace. */
  limits: UsageLimits;
  /** The server-wide defaults. */
  defaults: UsageLimits;
  /** What this namespace sets itself (a limit left out is the default's). */
  overrides: Partial<UsageLimits>;
  updatedAt?: string | undefined;
  updatedBy?: string | undefined;
}

interface Window {
  start: number;
  count: number;
}

/**
 * Per-user limits on a server: requests per minute (counted in memory, per instance), turns
 * running at once and model tokens per UTC day (both counted from the database, so every instance
 * sharing it counts the same). The limits that apply are those of the namespace the request acts
 * in (an administrator's overrides), else the server's defaults. The local user, and the platform
 * acting on its own, are never limited.
 */
export class QuotaService {
  private readonly deps: QuotaDeps;
  private readonly now: () => number;
  private readonly ttl: number;
  private overrides = new Map<string, LimitOverrides>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private readonly windows = new Map<string, Window>();
  private sweptAt = 0;

  constructor(deps: QuotaDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.ttl = deps.overridesTtlMs ?? OVERRIDES_TTL_MS;
  }

  /**
   * Counts a request against the caller's requests per minute, or refuses it (BUDGET_EXCEEDED with
   * `retryAfterSeconds`). Synchronous while the cached overrides are fresh: this runs per request.
   */
  admitRequest(principal: Principal): void | Promise<void> {
    if (exempt(principal)) return;
    if (this.now() - this.loadedAt < this.ttl) return this.countRequest(principal);
    return this.refreshed().then(() => this.countRequest(principal));
  }

  /**
   * Refuses to start a turn — a chat message, a plan phase, a compaction — while the caller has
   * `concurrentTurns` turns running or has used `tokensPerDay` model tokens today (UTC); with
   * `only`, that limit alone (a phase that runs no model). Read from the database when the turn
   * starts, one query per limit: two turns started at the same instant may both pass (a limit, not
   * a lock).
   */
  async admitTurn(principal: Principal, only?: 'concurrentTurns'): Promise<void> {
    if (exempt(principal)) return;
    await this.refreshed();
    const limits = this.limitsIn(principal.namespace);
    if (limits.concurrentTurns > 0) {
      const running = await this.deps.usage.runningTurns(principal.id);
      if (running >= limits.concurrentTurns)
        throw limitExceeded(
          'concurrentTurns',
          limits.concurrentTurns,
          principal.namespace,
          TURN_RETRY_SECONDS,
          undefined,
        );
    }
    if (limits.tokensPerDay > 0 && only === undefined) {
      const now = this.now();
      const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
      const used = await this.deps.usage.tokensSince(principal.id, new Date(dayStart).toISOString());
      if (used >= limits.tokensPerDay) {
        const resets = dayStart + DAY_MS;
        throw limitExceeded(
          'tokensPerDay',
          limits.tokensPerDay,
          principal.namespace,
          (resets - now) / 1000,
          new Date(resets).toISOString(),
        );
      }
    }
  }

  /** A namespace's limits (server administrators only). */
  async get(namespace: string, principal: Principal): Promise<LimitsView> {
    adminOnly(principal, 'read');
    await this.existing(namespace);
    return this.view(namespace, await this.deps.limits.get(namespace));
  }

  /**
   * Sets some of a namespace's limits (server administrators only): a number (0: no limit) sets it
   * for every user acting there, null returns it to the server's default; the rest stay as they are.
   */
  async set(namespace: string, changes: LimitOverrides, principal: Principal): Promise<LimitsView> {
    adminOnly(principal, 'change');
    if (this.deps.mode === 'local')
      throw new AppError('UNSUPPORTED_OPERATION', 'Limits apply on a server: local mode has one user, never limited', {
        hint: 'set them on a server (agents namespace limits <namespace> …, connected to it)',
      });
    await this.existing(namespace);
    const before = (await this.deps.limits.get(namespace))?.limits ?? {};
    const next: LimitOverrides = {};
    for (const k of LIMIT_NAMES) {
      const v = k in changes ? changes[k] : before[k];
      if (v === undefined || v === null) continue;
      if (!Number.isSafeInteger(v) || v < 0 || v > MAX_LIMIT)
        throw new AppError('INVALID_PARAMS', `Invalid parameters: ${k} must be a whole number from 0 to ${MAX_LIMIT}`, {
          fields: [
            { field: k, description: `a whole number from 0 (no limit) to ${MAX_LIMIT}, or null for the default` },
          ],
        });
      next[k] = v;
    }
    const entry: StoredLimits = {
      namespace,
      limits: next,
      updatedAt: new Date(this.now()).toISOString(),
      updatedBy: principal.id,
    };
    await this.deps.limits.put(entry);
    // This instance applies it at once; the others when their cache is next read (OVERRIDES_TTL_MS).
    if (Object.keys(next).length > 0) this.overrides.set(namespace, next);
    else this.overrides.delete(namespace);
    await this.deps.audit?.record({
      event: 'limits.changed',
      by: principal,
      outcome: 'ok',
      target: namespace,
      namespace,
      details: { before, after: next },
    });
    return this.view(namespace, entry);
  }

  /** The limits in force in a namespace (its overrides, else the defaults). */
  limitsIn(namespace: string): UsageLimits {
    return effectiveLimits(this.deps.defaults, this.overrides.get(namespace));
  }

  private countRequest(principal: Principal): void {
    // The common case, per request: no rate limit anywhere.
    if (this.overrides.size === 0 && this.deps.defaults.requestsPerMinute === 0) return;
    const limit = this.limitsIn(principal.namespace).requestsPerMinute;
    if (limit <= 0) return;
    const now = this.now();
    this.sweep(now);
    const w = this.windows.get(principal.id);
    if (!w || now - w.start >= MINUTE_MS) {
      this.windows.set(principal.id, { start: now, count: 1 });
      return;
    }
    if (w.count >= limit) {
      const resets = w.start + MINUTE_MS;
      throw limitExceeded(
        'requestsPerMinute',
        limit,
        principal.namespace,
        (resets - now) / 1000,
        new Date(resets).toISOString(),
      );
    }
    w.count++;
  }

  /** Forgets the windows that have ended (at most once a minute), so the map holds recent callers only. */
  private sweep(now: number): void {
    if (now - this.sweptAt < MINUTE_MS) return;
    this.sweptAt = now;
    for (const [user, w] of this.windows) if (now - w.start >= MINUTE_MS) this.windows.delete(user);
  }

  /**
   * The overrides, read again once they are older than the TTL. A failed read keeps the ones
   * already read (a database blip does not lift or change limits); with none read yet it throws.
   */
  private async refreshed(): Promise<void> {
    if (this.now() - this.loadedAt < this.ttl) return;
    this.loading ??= this.deps.limits
      .list()
      .then((rows) => {
        this.overrides = new Map(rows.filter((r) => anyOverride(r.limits)).map((r) => [r.namespace, r.limits]));
        this.loadedAt = this.now();
      })
      .finally(() => (this.loading = undefined));
    const first = this.loadedAt === -Infinity;
    await this.loading.catch((err: unknown) => {
      if (first) throw err;
    });
  }

  private async existing(namespace: string): Promise<void> {
    if (!(await this.deps.namespaces.get(namespace))) throw namespaceNotFound(namespace);
  }

  private view(namespace: string, stored: StoredLimits | undefined): LimitsView {
    const overrides: Partial<UsageLimits> = {};
    for (const k of LIMIT_NAMES) {
      const v = stored?.limits[k];
      if (typeof v === 'number') overrides[k] = v;
    }
    return {
      namespace,
      limits: effectiveLimits(this.deps.defaults, overrides),
      defaults: { ...this.deps.defaults },
      overrides,
      ...(stored && anyOverride(stored.limits) ? { updatedAt: stored.updatedAt, updatedBy: stored.updatedBy } : {}),
    };
  }
}

const exempt = (p: Principal): boolean => p.kind === 'local' || p.kind === 'system';

const anyOverride = (l: LimitOverrides): boolean => LIMIT_NAMES.some((k) => typeof l[k] === 'number');

function adminOnly(principal: Principal, what: 'read' | 'change'): void {
  if (!principal.admin)
    throw new AppError('FORBIDDEN', `Only a server administrator may ${what} a namespace's limits`, {
      hint: 'ask a server administrator (see `agents whoami`)',
    });
}
