import { A2ATransportError } from '../../protocol/client/index.ts';
import { exitReasonOf, type ExitReason } from '../cli/exit-codes.ts';
import { reportOf, type Target } from '../cli/render/error.render.ts';
import type { Store } from './store.ts';

/** How the TUI ended: the exit reason, and the error that ended it (a dead local agent). */
export interface TuiExit {
  reason: ExitReason;
  error?: unknown;
}

/**
 * Runs the calls the keys and commands make: a refused call is shown in the status line with its
 * hint; a local agent that died ends the app (nothing works without it).
 */
export class Guard {
  private ended: ((e: TuiExit) => void) | undefined;
  /** Resolves when the app should end. */
  readonly done: Promise<TuiExit>;

  private readonly store: Store;
  readonly target: Target;

  constructor(store: Store, target: Target) {
    this.store = store;
    this.target = target;
    this.done = new Promise((resolve) => (this.ended = resolve));
  }

  quit(exit: TuiExit = { reason: 'OK' }): void {
    this.ended?.(exit);
    this.ended = undefined;
  }

  /** Shows `err` with its hint in the status line. */
  report(err: unknown): void {
    if (err instanceof A2ATransportError && this.target.kind === 'local') {
      this.quit({ reason: 'UNREACHABLE', error: err });
      return;
    }
    this.store.dispatch({
      type: 'notice',
      notice: { level: 'error', report: reportOf(err, exitReasonOf(err), this.target) },
    });
  }

  info(text: string): void {
    this.store.dispatch({ type: 'notice', notice: { level: 'info', text } });
  }

  async run<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    this.store.dispatch({ type: 'busy', what });
    try {
      return await fn();
    } catch (err) {
      this.report(err);
      return undefined;
    } finally {
      if (this.store.get().busy === what) this.store.dispatch({ type: 'busy', what: undefined });
    }
  }
}
