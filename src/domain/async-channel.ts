/**
 * A single-consumer async queue: producers push synchronously, the consumer iterates with
 * `for await`. Leaving the loop early (or `end()`) runs the cleanup once.
 */
export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly buffer: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private closed = false;
  /** Set by fail() while values are still buffered: raised once they are read. */
  private failure: { error: unknown } | undefined;
  private cleaned = false;

  private readonly cleanup: () => void;

  constructor(cleanup: () => void = () => {}) {
    this.cleanup = cleanup;
  }

  push(value: T): void {
    if (this.closed) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value, done: false });
    } else {
      this.buffer.push(value);
    }
  }

  /** Ends the stream after what is buffered has been read. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.runCleanup();
    if (this.waiter && this.buffer.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: undefined, done: true });
    }
  }

  /** Ends the stream with an error, raised once the buffer is drained. */
  fail(error: unknown): void {
    if (this.closed) return;
    const failure = error ?? new Error('stream failed');
    if (this.waiter) {
      // A waiting consumer means the buffer is empty: it gets the error now.
      const w = this.waiter;
      this.waiter = undefined;
      this.closed = true;
      this.runCleanup();
      w.reject(failure);
      return;
    }
    this.failure = { error: failure };
    this.end();
  }

  next(): Promise<IteratorResult<T>> {
    const value = this.buffer.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.closed) {
      if (this.failure !== undefined) {
        const f = this.failure;
        this.failure = undefined;
        return Promise.reject(f.error);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.buffer.length = 0;
    this.failure = undefined;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private runCleanup(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    this.cleanup();
  }
}
