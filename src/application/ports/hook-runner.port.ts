import type { HookDefinition, HookOutcome } from '../../domain/registry/hook.ts';

export type { HookOutcome } from '../../domain/registry/hook.ts';

/** One run of a hook: its definition, the event JSON it is given, and where a command runs. */
export interface HookInvocation {
  hook: HookDefinition;
  /** The event as JSON: a command's stdin, a webhook's POST body. */
  payload: string;
  /**
   * Where a command runs and the only directory it may write: the chat project's resource root or
   * the plan's sandbox (absent: an empty directory of its own, removed afterwards).
   */
  workdir?: string | undefined;
  /** Whether a command may reach the network (the project's or plan's setting; default none). */
  network: 'none' | 'allow';
  /** Whether a webhook may reach loopback and private addresses (its namespace holds private-network). */
  privateNetwork?: boolean | undefined;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Runs hooks: a command confined like every command (no server environment, no network unless
 * allowed), the event on its stdin; a webhook as one POST (its URL checked like push webhooks').
 * Never throws for the hook's own failure (timeout, crash, refused URL): that is `failure`.
 */
export interface HookRunner {
  run(inv: HookInvocation): Promise<HookOutcome>;
}
