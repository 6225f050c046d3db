/**
 * The tracing port over OpenTelemetry: spans batched to an OTLP/HTTP receiver (JSON), the current
 * span carried by AsyncLocalStorage, a client's W3C `traceparent` taken as a remote parent. Loaded
 * only when an endpoint is configured (src/main imports this module dynamically).
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator, ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger, SpanOptions, TraceAttributes, TraceSpan, Tracer } from '../../application/index.ts';
import { messageOf } from '../../domain/errors.ts';

export interface OtelTracingOptions {
  /** The OTLP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`): spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  serviceName: string;
  serviceVersion: string;
  logger: Logger;
  /** How long spans wait to be sent in one batch (ms; default 5000, the SDK's). */
  scheduledDelayMs?: number | undefined;
}

export interface OtelTracing {
  tracer: Tracer;
  /** Sends what is still queued (bounded by the exporter's timeout) and stops. */
  shutdown(): Promise<void>;
}

/** How long the last spans may take to go out at shutdown. */
const SHUTDOWN_GRACE_MS = 2_000;

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;

/** The URL spans are posted to: the signal path appended to the base, as the OTLP spec says. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

export function openOtelTracing(opts: OtelTracingOptions): OtelTracing {
  const exporter = new QuietExporter(
    new OTLPTraceExporter({ url: tracesUrl(opts.endpoint) }),
    opts.logger,
    opts.endpoint,
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.serviceVersion }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        ...(opts.scheduledDelayMs !== undefined ? { scheduledDelayMillis: opts.scheduledDelayMs } : {}),
      }),
    ],
  });
  // This process's own manager and propagator, not the global API's: nothing else registers one,
  // and a library that did could not take them away.
  const manager = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();
  const otel = provider.getTracer('cleveragents', opts.serviceVersion);
  const tracer: Tracer = {
    enabled: true,
    start(name: string, options: SpanOptions = {}): TraceSpan {
      const parent: Context =
        options.traceparent !== undefined
          ? propagator.extract(ROOT_CONTEXT, { traceparent: options.traceparent }, carrierGetter)
          : manager.active();
      const span = otel.startSpan(
        name,
        { kind: KINDS[options.kind ?? 'internal'], attributes: attributesOf(options.attributes) },
        parent,
      );
      return new OtelSpan(span);
    },
    within<T>(span: TraceSpan, fn: () => T): T {
      if (!(span instanceof OtelSpan)) return fn();
      return manager.with(trace.setSpan(manager.active(), span.span), fn);
    },
  };
  return {
    tracer,
    async shutdown() {
      // What is queued gets a short while to go out: a receiver that is down must not hold the exit.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        provider.shutdown().catch((err: unknown) => opts.logger.warn({ err }, 'stopping the tracer failed')),
        new Promise<void>((r) => {
          timer = setTimeout(r, SHUTDOWN_GRACE_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      manager.disable();
    },
  };
}

const carrierGetter = {
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
  get: (carrier: Record<string, string>, key: string) => carrier[key],
};

class OtelSpan implements TraceSpan {
  readonly span: Span;
  constructor(span: Span) {
    this.span = span;
  }
  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(attributesOf(attributes));
  }
  recordError(err: unknown): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(err) });
    this.span.setAttribute('error.type', err instanceof Error ? err.name : 'error');
  }
  end(): void {
    this.span.end();
  }
}

function attributesOf(a: TraceAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (!a) return out;
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = typeof v === 'object' ? [...v] : v;
  return out;
}

/**
 * The exporter, with its failures logged once per outage (not per batch, nor per span): a receiver
 * that is down must not fill the log, and never fails a request (spans are sent in the background).
 */
class QuietExporter implements SpanExporter {
  private failing = false;
  private readonly inner: SpanExporter;
  private readonly logger: Logger;
  private readonly endpoint: string;

  constructor(inner: SpanExporter, logger: Logger, endpoint: string) {
    this.inner = inner;
    this.logger = logger;
    this.endpoint = endpoint;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      this.send(spans, done);
    } catch (err) {
      // A batch the exporter cannot even serialise is dropped like one the receiver refused.
      this.failed(err);
      done({ code: ExportResultCode.SUCCESS });
    }
  }

  private failed(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn(
      { endpoint: this.endpoint, err: err ? messageOf(err) : undefined },
      'sending traces to the OTLP endpoint failed (spans are dropped until it answers; said once)',
    );
  }

  private send(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failed(result.error);
      else if (result.code === ExportResultCode.SUCCESS && this.failing) {
        this.failing = false;
        this.logger.info({ endpoint: this.endpoint }, 'the OTLP endpoint answers again');
      }
      // Reported as done either way: the SDK's own error handler would log each failed batch.
      done({ code: ExportResultCode.SUCCESS });
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
