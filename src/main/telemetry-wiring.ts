/**
 * Metrics and traces for `agents serve`, both off by default. Their libraries are imported only
 * when turned on (prom-client and OpenTelemetry together are a visible share of a start): a local
 * agent that traces nothing loads neither.
 */
import type { ServeOptions } from '../presentation/cli/index.ts';
import type { Logger, Tracer } from '../application/index.ts';
import type { SqliteStorage } from '../infrastructure/index.ts';
import type { PgStorage } from '../infrastructure/persistence/postgres/pg-storage.ts';
import { METHODS } from '../protocol/a2a/method-table.ts';
import type { MetricsExposition } from '../protocol/server/metrics-route.ts';
import { requestTelemetry, type RequestMetrics, type RequestTelemetry } from '../protocol/server/request-telemetry.ts';
import type { App } from './app.ts';
import { envInt } from './limits-config.ts';
import { StartupError } from './startup-errors.ts';
import { VERSION } from './version.ts';

export interface TelemetrySettings {
  metrics: boolean;
  /** The OTLP/HTTP base URL (traces go to `<url>/v1/traces`); undefined: tracing off. */
  otlpEndpoint: string | undefined;
  /** How long spans wait to be batched (ms; OTEL_BSP_SCHEDULE_DELAY as the OTel spec names it). */
  batchDelayMs: number | undefined;
}

/** `--metrics` / CLEVERAGENTS_METRICS=1 and `--otlp-endpoint` / OTEL_EXPORTER_OTLP_ENDPOINT, checked. */
export function telemetrySettings(
  opts: Pick<ServeOptions, 'metrics' | 'otlpEndpoint'>,
  env: NodeJS.ProcessEnv = process.env,
): TelemetrySettings {
  const flag = env['CLEVERAGENTS_METRICS']?.trim();
  if (flag !== undefined && flag !== '' && flag !== '0' && flag !== '1')
    throw new StartupError(
      `CLEVERAGENTS_METRICS must be 1 or 0, got ${JSON.stringify(flag.slice(0, 50))}`,
      'set CLEVERAGENTS_METRICS=1 to serve /metrics',
    );
  const raw = (opts.otlpEndpoint ?? env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? '').trim();
  const what = opts.otlpEndpoint !== undefined ? '--otlp-endpoint' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let otlpEndpoint: string | undefined;
  if (raw !== '') {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new StartupError(
        `${what} must be an http(s) URL, got ${JSON.stringify(raw.slice(0, 200))}`,
        'pass the collector’s OTLP/HTTP base URL, e.g. --otlp-endpoint http://localhost:4318',
      );
    otlpEndpoint = raw;
  }
  return {
    metrics: opts.metrics === true || flag === '1',
    otlpEndpoint,
    batchDelayMs: envInt('OTEL_BSP_SCHEDULE_DELAY', 0, 600_000),
  };
}

export interface Tracing {
  tracer: Tracer;
  shutdown(): Promise<void>;
}

/** The OpenTelemetry tracer, loaded now; undefined when tracing is off. */
export async function openTracing(s: TelemetrySettings, logger: Logger): Promise<Tracing | undefined> {
  if (!s.otlpEndpoint) return undefined;
  const { openOtelTracing } = await import('../infrastructure/telemetry/otel.tracer.ts');
  return openOtelTracing({
    endpoint: s.otlpEndpoint,
    serviceName: 'cleveragents',
    serviceVersion: VERSION,
    logger,
    scheduledDelayMs: s.batchDelayMs,
  });
}

export interface ServerTelemetry {
  /** For the transports: spans and request counts. */
  requests: RequestTelemetry;
  /** For GET /metrics (undefined: metrics off, a 404). */
  exposition: MetricsExposition | undefined;
}

const KNOWN = new Set(METHODS.flatMap((m) => [m.name, ...(m.aliases ?? []), ...(m.v03?.name ? [m.v03.name] : [])]));
const known = (method: string): boolean => KNOWN.has(method);

/** The local agent's: spans only (it serves no /metrics). */
export function stdioTelemetry(tracer: Tracer | undefined): RequestTelemetry {
  return requestTelemetry(tracer, undefined, known);
}

/** What the transports report to; `openStreams` is read at each scrape (the HTTP server's). */
export async function serverTelemetry(
  s: TelemetrySettings,
  app: App,
  tracer: Tracer | undefined,
  openStreams: () => number,
): Promise<ServerTelemetry> {
  if (!s.metrics) return { requests: requestTelemetry(tracer, undefined, known), exposition: undefined };
  const [{ PrometheusMetrics }, { storageGauges }] = await Promise.all([
    import('../infrastructure/telemetry/prometheus.metrics.ts'),
    import('../infrastructure/telemetry/storage-gauges.ts'),
  ]);
  const gauges = storageGauges(app.storage as SqliteStorage | PgStorage);
  const metrics = new PrometheusMetrics(KNOWN, {
    turnsRunning: () => app.live.all().filter((l) => l.running > 0).length,
    openStreams,
    outboxDepth: () => gauges.outboxDepth(),
    liveRunners: () => gauges.liveRunners(),
    pool: () => gauges.pool(),
  });
  const observe: RequestMetrics = metrics;
  return { requests: requestTelemetry(tracer, observe, known), exposition: metrics };
}
