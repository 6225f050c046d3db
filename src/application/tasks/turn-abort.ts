/**
 * A live task's abort: what an AbortController does, with the AbortSignal made only when
 * something asks for it. Every event checks whether its task was aborted, while few actors ever
 * read the signal (the builtin ones do not), and making one per task showed in SendMessage
 * profiles (~1% of the server's CPU, with the signal's checks per event).
 */
export class TurnAbort {
  private controller: AbortController | undefined;
  private why: unknown;
  private done = false;

  /** Whether {@link abort} was called. */
  get aborted(): boolean {
    return this.done;
  }

  /** The signal, aborted with the same reason if {@link abort} came first. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** Aborts once; later calls change nothing (as AbortController.abort). */
  abort(reason?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.why = reason;
    this.controller?.abort(reason);
  }
}
