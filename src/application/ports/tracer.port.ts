/**
 * Tracing, as the application sees it: spans started, made current, attributed and ended. The
 * OpenTelemetry adapter lives in infrastructure and is loaded only when an OTLP endpoint is set;
 * without one NO_TRACER costs a call per span and nothing else.
 */

/** Attribute values a span keeps (undefined ones are left out). */
export type TraceAttributes = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>;

export interface TraceSpan {
  setAttributes(attributes: TraceAttributes): void;
  /** Marks the span failed with this error (its message, not its stack, for the receiver). */
  recordError(err: unknown): void;
  end(): void;
}

export interface SpanOptions {
  /** OpenTelemetry span kind: `server` for a request received, `client` for a call out. */
  kind?: 'server' | 'client' | 'internal' | undefined;
  attributes?: TraceAttributes | undefined;
  /**
   * A W3C `traceparent` the span continues (a client's): without one, or when it is malformed,
   * the span is a child of the current span (or a new trace's root).
   */
  traceparent?: string | undefined;
}

export interface Tracer {
  /** False for NO_TRACER: callers may skip building attributes. */
  readonly enabled: boolean;
  /** Starts a span: a child of the current one, unless `traceparent` names a remote parent. */
  start(name: string, options?: SpanOptions): TraceSpan;
  /** Runs `fn` with `span` current: the spans started in it, and in what it starts, are its children. */
  within<T>(span: TraceSpan, fn: () => T): T;
}

const NO_SPAN: TraceSpan = {
  setAttributes: () => {},
  recordError: () => {},
  end: () => {},
};

/** Tracing off. */
export const NO_TRACER: Tracer = {
  enabled: false,
  start: () => NO_SPAN,
  within: (_span, fn) => fn(),
};

/**
 * Runs `fn` in a new span that ends when `fn` settles; what it throws is recorded on the span and
 * thrown on.
 */
export async function traced<T>(
  tracer: Tracer,
  name: string,
  options: SpanOptions,
  fn: (span: TraceSpan) => Promise<T>,
): Promise<T> {
  if (!tracer.enabled) return fn(NO_SPAN);
  const span = tracer.start(name, options);
  try {
    return await tracer.within(span, () => fn(span));
  } catch (err) {
    span.recordError(err);
    throw err;
  } finally {
    span.end();
  }
}
