import type { LimitOverrides } from '../../domain/quota.ts';
import type { Principal } from './principal.ts';

/** A namespace's stored overrides of the server's default limits. */
export interface StoredLimits {
  namespace: string;
  limits: LimitOverrides;
  updatedAt: string;
  updatedBy: string;
}

/**
 * What the limits are counted from, read from the database so that every instance sharing it
 * counts the same: the user's turns still running and the model tokens they used. Each read is
 * one indexed query.
 */
export interface UsageCounter {
  /**
   * Tasks whose latest turn the user started (a chat message, a follow-up, a plan phase) that are
   * submitted or working (under any instance's runner).
   */
  runningTurns(user: string): Promise<number>;
  /** Model tokens (input + output) the user used since `since` (ISO instant), as {@link UsageLedger} recorded them. */
  tokensSince(user: string, since: string): Promise<number>;
}

/** Where the model tokens each user uses are written, a model step at a time. */
export interface UsageLedger {
  /** Adds `tokens` used by `user` at `at` (ISO instant). */
  record(user: string, tokens: number, at: string): Promise<void>;
  /** Forgets what was used before `before` (ISO instant): no limit reads further back than a day. */
  prune(before: string): Promise<number>;
}

/** Namespaces' limit overrides (server mode; set by administrators). */
export interface NamespaceLimitsRepository {
  /** Every namespace that has overrides. */
  list(): Promise<StoredLimits[]>;
  get(namespace: string): Promise<StoredLimits | undefined>;
  /** Replaces a namespace's overrides (an empty set removes the row). */
  put(entry: StoredLimits): Promise<void>;
}

/**
 * What decides whether a principal may start a turn now — a chat turn, a plan phase, a compaction
 * (per-user limits: QuotaService). `concurrentTurns` only: a phase that runs no model (an apply).
 */
export interface TurnAdmission {
  admitTurn(principal: Principal, only?: 'concurrentTurns'): Promise<void>;
}
