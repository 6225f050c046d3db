import type { LimitOverrides } from '../../domain/quota.ts';

/** A namespace's stored overrides of the server's default limits. */
export interface StoredLimits {
  namespace: string;
  limits: LimitOverrides;
  updatedAt: string;
  updatedBy: string;
}

/**
 * What the limits are counted from, read from the database so that every instance sharing it
 * counts the same: the user's turns still running and the model tokens of their turns.
 */
export interface UsageCounter {
  /** Tasks the user started that are submitted or working (under any instance's runner). */
  runningTurns(user: string): Promise<number>;
  /** Model tokens (input + output, from the stored usage of turns) of the user's tasks changed since `since` (ISO instant). */
  tokensSince(user: string, since: string): Promise<number>;
}

/** Namespaces' limit overrides (server mode; set by administrators). */
export interface NamespaceLimitsRepository {
  /** Every namespace that has overrides. */
  list(): Promise<StoredLimits[]>;
  get(namespace: string): Promise<StoredLimits | undefined>;
  /** Replaces a namespace's overrides (an empty set removes the row). */
  put(entry: StoredLimits): Promise<void>;
}
