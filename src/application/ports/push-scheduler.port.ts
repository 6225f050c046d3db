import type { OutboxTarget } from './push-outbox.port.ts';

/** What one drain of a target left behind. */
export interface PushDrainResult {
  /**
   * Entries remain, the first not due before this instant (ISO 8601): drain the target again then.
   * A past or present instant means "at once" (the drain stopped early: its time was up, or it was stopped).
   */
  notBefore?: string | undefined;
}

/**
 * Delivers a target's due entries in seq order until none is left or the next is not due yet.
 * `until` (epoch ms) bounds the run: past it the drain returns after the attempt in progress.
 */
export type PushDrain = (target: OutboxTarget, until?: number) => Promise<PushDrainResult>;

/**
 * When, and where, push deliveries are attempted. The notifier stores every delivery in the
 * outbox and says which target has work (`wake`); the scheduler calls the drain — for one target
 * at most one drain at a time (across every instance that shares the outbox), again when what
 * it left becomes due. In one process that is a loop per target (InProcessPushScheduler); with
 * several server instances a shared job queue decides which instance drains (PostgreSQL).
 */
export interface PushScheduler {
  /** Registers the drain (once, before any wake). */
  start(drain: PushDrain): void;
  /** The target has work, due at `notBefore` (ISO 8601; default now). Never rejects (failures are logged). */
  wake(target: OutboxTarget, notBefore?: string): Promise<void>;
  /** Wakes every target that has entries pending (at start, and in the periodic sweep). */
  resumeAll(targets: readonly OutboxTarget[]): Promise<void>;
  /** Resolves once no drain runs or waits in this process (retries included). */
  idle(): Promise<void>;
  /** Stops draining; what is pending stays in the outbox (and, when shared, is drained elsewhere). */
  stop(): Promise<void>;
}
