/**
 * Closed-loop load: `connections` keep-alive connections, each sending its next request as soon as
 * the previous answer arrived and was validated. Every run is bounded in count and in time.
 */
import { RawConnection, type RawResponse } from './http-client.ts';
import { percentile } from './stats.ts';

export interface LoadSpec {
  port: number;
  /** Servers to spread the connections over, round robin (default: `port` alone). */
  ports?: readonly number[] | undefined;
  connections: number;
  /** The bytes of request number `i`, sent to the server on `port`. */
  request(i: number, port: number): Buffer;
  /** Throws when a response is not the expected one. */
  validate(res: RawResponse, i: number): void;
  maxRequests: number;
  maxMs: number;
}

export interface LoadResult {
  requests: number;
  elapsedMs: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time this (load-generating) process used, to show it was not the bottleneck. */
  clientCpuMs: number;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const ports = spec.ports && spec.ports.length > 0 ? spec.ports : [spec.port];
  const portOf = (c: number): number => ports[c % ports.length] as number;
  const conns = await Promise.all(Array.from({ length: spec.connections }, (_, c) => RawConnection.open(portOf(c))));
  const latencies = new Float64Array(spec.maxRequests);
  let issued = 0;
  let done = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + spec.maxMs;
  try {
    await Promise.all(
      conns.map(async (c, n) => {
        while (issued < spec.maxRequests && performance.now() < deadline) {
          const i = issued++;
          const s = performance.now();
          const res = await c.request(spec.request(i, portOf(n)));
          latencies[done++] = performance.now() - s;
          spec.validate(res, i);
        }
      }),
    );
  } finally {
    for (const c of conns) c.close();
  }
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const lat = Array.from(latencies.subarray(0, done)).sort((a, b) => a - b);
  return {
    requests: done,
    elapsedMs,
    rps: (done / elapsedMs) * 1000,
    p50Ms: percentile(lat, 0.5),
    p99Ms: percentile(lat, 0.99),
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

/** Runs `fn` for each item with at most `limit` running at once. */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}
