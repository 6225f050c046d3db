/** A Tracer that records its spans in memory, with parents from a simple current-span stack. */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SpanOptions, TraceAttributes, TraceSpan, Tracer } from '../../../src/application/ports/tracer.port.ts';

export interface RecordedSpan {
  name: string;
  options: SpanOptions;
  parent: RecordedSpan | undefined;
  attributes: Record<string, unknown>;
  errors: string[];
  ended: boolean;
}

export function recordingTracer(): Tracer & { spans: RecordedSpan[] } {
  const current = new AsyncLocalStorage<RecordedSpan>();
  const spans: RecordedSpan[] = [];
  const handles = new WeakMap<TraceSpan, RecordedSpan>();
  return {
    enabled: true,
    spans,
    start(name: string, options: SpanOptions = {}): TraceSpan {
      const rec: RecordedSpan = {
        name,
        options,
        parent: current.getStore(),
        attributes: { ...options.attributes },
        errors: [],
        ended: false,
      };
      spans.push(rec);
      const handle: TraceSpan = {
        setAttributes: (a: TraceAttributes) => Object.assign(rec.attributes, a),
        recordError: (err: unknown) => rec.errors.push(err instanceof Error ? err.message : String(err)),
        end: () => {
          rec.ended = true;
        },
      };
      handles.set(handle, rec);
      return handle;
    },
    within<T>(span: TraceSpan, fn: () => T): T {
      const rec = handles.get(span);
      return rec ? current.run(rec, fn) : fn();
    },
  };
}
