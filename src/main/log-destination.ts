/**
 * Where the structured log goes: stderr, written synchronously (a line is out before anything
 * that follows it can crash), but once per tick. A server under load logs a line per request
 * (the access log); the requests one event-loop turn answers are logged together in one write
 * instead of one system call each. A line is never held longer than the turn it was written in:
 * the batch leaves when the loop reaches its check phase, or when the process exits, whichever
 * comes first — and lines written while the process exits leave at once.
 */

/** The synchronous sink under the batching (pino's SonicBoom in production; a stub in tests). */
export interface SyncSink {
  write(text: string): unknown;
}

/** The destinations with lines batched now; one exit listener writes them all. */
const pending = new Set<TickBatchedDestination>();
let exiting = false;
let watching = false;

function onExit(): void {
  exiting = true;
  for (const d of pending) d.flush();
}

export class TickBatchedDestination {
  private buffer = '';

  private readonly sink: SyncSink;

  constructor(sink: SyncSink) {
    this.sink = sink;
    if (!watching) {
      watching = true;
      process.on('exit', onExit);
    }
  }

  /** pino's stream interface: one serialised line (or several) to write. */
  write(text: string): boolean {
    // The exit listener has written every batch by now: nothing is left to go before this line.
    if (exiting) {
      this.sink.write(text);
      return true;
    }
    this.buffer += text;
    if (!pending.has(this)) {
      pending.add(this);
      setImmediate(() => this.flush());
    }
    return true;
  }

  /** Writes what is batched now; pino's `logger.flush(cb)` calls it with its callback. */
  flush(done?: (err?: Error) => void): void {
    pending.delete(this);
    if (this.buffer !== '') {
      const text = this.buffer;
      this.buffer = '';
      this.sink.write(text);
    }
    done?.();
  }
}
