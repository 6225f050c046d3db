/**
 * What the transports report of each request beyond the access log: a span (continuing the
 * client's `traceparent`) that is current while the request runs, so the turn it starts is its
 * child; and the finished access record for the request metrics. Off: one shared no-op object.
 */
import { NO_TRACER, type TraceSpan, type Tracer } from '../../application/index.ts';
import type { AccessRecord } from './access-log.ts';

/** Counts finished requests (the Prometheus adapter). */
export interface RequestMetrics {
  observe(rec: AccessRecord): void;
}

export interface RequestTelemetry {
  /** A request arrives (`method`: known on stdio at once, on HTTP once the body is read). */
  begin(transport: AccessRecord['transport'], traceparent: string | undefined, method?: string): RequestObservation;
}

export interface RequestObservation {
  /** Runs the request's handling with its span current. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** The request is answered (or its stream ended): its span ends and it is counted. */
  end(rec: AccessRecord): void;
}

const NOTHING: RequestObservation = { run: (fn) => fn(), end: () => {} };

export const NO_REQUEST_TELEMETRY: RequestTelemetry = { begin: () => NOTHING };

/** Telemetry from a tracer and request metrics, either of which may be off. */
export function requestTelemetry(
  tracer: Tracer = NO_TRACER,
  metrics: RequestMetrics | undefined,
  /** Span names only from the method table (bounded): anything else is `unknown`. */
  known: (method: string) => boolean,
): RequestTelemetry {
  if (!tracer.enabled && !metrics) return NO_REQUEST_TELEMETRY;
  return {
    begin(transport, traceparent, method) {
      const span = tracer.enabled
        ? tracer.start(transport === 'http' ? 'POST /a2a' : `jsonrpc ${method && known(method) ? method : 'unknown'}`, {
            kind: 'server',
            traceparent,
            attributes: {
              'rpc.system': 'jsonrpc',
              ...(transport === 'http'
                ? { 'http.request.method': 'POST', 'http.route': '/a2a', 'url.path': '/a2a' }
                : { 'network.transport': 'pipe' }),
            },
          })
        : undefined;
      return {
        run: (fn) => (span ? tracer.within(span, fn) : fn()),
        end(rec) {
          metrics?.observe(rec);
          if (span) endSpan(span, rec, known);
        },
      };
    },
  };
}

function endSpan(span: TraceSpan, rec: AccessRecord, known: (method: string) => boolean): void {
  span.setAttributes({
    'rpc.method': rec.method !== undefined && known(rec.method) ? rec.method : 'unknown',
    'rpc.jsonrpc.error_code': typeof rec.outcome === 'number' ? rec.outcome : undefined,
    'http.response.status_code': rec.status,
    'cleveragents.correlation_id': rec.correlationId,
  });
  if (typeof rec.outcome === 'number' || (rec.status !== undefined && rec.status >= 500))
    span.recordError(new Error(`answered with error ${rec.outcome}`));
  span.end();
}

/**
 * A stdio request's trace context: `params._meta.traceparent` (the `_meta` member MCP reserves for
 * such metadata). `_meta` is taken out of the params, so that methods whose params are strict do
 * not refuse it.
 */
export function takeTraceparent(params: unknown): string | undefined {
  if (!params || typeof params !== 'object' || Array.isArray(params) || !('_meta' in params)) return undefined;
  const holder = params as { _meta?: unknown };
  const meta = holder._meta;
  delete holder._meta;
  const tp = (meta as { traceparent?: unknown } | null)?.traceparent;
  return typeof tp === 'string' ? tp : undefined;
}
