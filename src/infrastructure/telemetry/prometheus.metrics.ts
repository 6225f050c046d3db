/**
 * The server's Prometheus metrics (prom-client, its own registry): requests by method and outcome
 * with their latency, and gauges read at scrape time (turns running, open streams, the push
 * outbox, the database pool, live runners). Labels are bounded: method names from the method table
 * (anything else is `unknown`), outcomes `ok`, `cancelled` or a JSON-RPC error code.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A finished request, as the access log records it. */
export interface ObservedRequest {
  transport: 'http' | 'stdio';
  method: string | undefined;
  outcome: 'ok' | 'cancelled' | number;
  ms: number;
}

/** What the gauges read at each scrape. */
export interface MetricsSources {
  turnsRunning(): number;
  openStreams(): number;
  /** Push deliveries waiting in the outbox (every instance's). */
  outboxDepth(): Promise<number>;
  /** Runners (instances) holding a live lease on the database. */
  liveRunners(): Promise<number>;
  /** The PostgreSQL pool; undefined on SQLite (one connection: the gauges are left out). */
  pool(): { total: number; idle: number; waiting: number } | undefined;
}

export class PrometheusMetrics {
  readonly contentType: string;
  private readonly registry = new Registry();
  private readonly requests: Counter<'transport' | 'method' | 'outcome'>;
  private readonly latency: Histogram<'transport' | 'method' | 'outcome'>;
  private readonly known: ReadonlySet<string>;

  constructor(methods: Iterable<string>, sources: MetricsSources) {
    this.known = new Set(methods);
    this.contentType = this.registry.contentType;
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'cleveragents_requests_total',
      help: 'JSON-RPC requests answered, by transport, method and outcome (ok, cancelled or the error code).',
      labelNames: ['transport', 'method', 'outcome'],
      registers,
    });
    this.latency = new Histogram({
      name: 'cleveragents_request_duration_seconds',
      help: 'Time to answer a JSON-RPC request (a stream: until it ended).',
      labelNames: ['transport', 'method', 'outcome'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    const gauge = (name: string, help: string, read: () => number | Promise<number>): void => {
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(await read());
        },
      });
    };
    gauge('cleveragents_turns_running', 'Actor turns running in this instance.', () => sources.turnsRunning());
    gauge('cleveragents_sse_streams_open', 'SSE streams open on this instance.', () => sources.openStreams());
    gauge('cleveragents_push_outbox_depth', 'Push deliveries waiting in the outbox (all instances).', () =>
      sources.outboxDepth(),
    );
    gauge('cleveragents_runners_live', 'Instances holding a live runner lease on the database.', () =>
      sources.liveRunners(),
    );
    if (sources.pool()) {
      gauge(
        'cleveragents_db_pool_connections',
        'PostgreSQL connections open in this instance’s pool.',
        () => sources.pool()?.total ?? 0,
      );
      gauge('cleveragents_db_pool_idle', 'Idle PostgreSQL connections in the pool.', () => sources.pool()?.idle ?? 0);
      gauge(
        'cleveragents_db_pool_waiting',
        'Queries waiting for a PostgreSQL connection.',
        () => sources.pool()?.waiting ?? 0,
      );
    }
  }

  observe(rec: ObservedRequest): void {
    const labels = {
      transport: rec.transport,
      method: rec.method !== undefined && this.known.has(rec.method) ? rec.method : 'unknown',
      outcome: String(rec.outcome),
    };
    this.requests.inc(labels);
    this.latency.observe(labels, rec.ms / 1000);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
