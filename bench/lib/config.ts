/** How long and how hard the bench runs (`--quick` for a run of ~7.5 minutes instead of ~17). */
export interface BenchConfig {
  quick: boolean;
  /** Alternating rounds per figure; the median is reported. */
  rounds: number;
  /** Measurement window per server per round. */
  windowMs: number;
  /**
   * Load a server takes before the measured windows, per kind of request: long enough to reach
   * its steady rate. Under load from cold, ours took 4–6 s to settle and the reference 3–4 s (V8
   * compiles and optimises lazily), so shorter warm-ups measured part of the ramp — ours most,
   * and the first rows after a warm-up most of all (docs/performance.md, round five).
   */
  warmupMs: number;
  /** Upper bound of requests in one window (the time bound usually ends it first). */
  maxRequests: number;
  connections: number;
  /** Concurrencies tried for peak throughput (unary workloads). */
  peakConnections: number[];
  streamSizes: number[];
  streamConnections: number;
  sseSubscriptions: number;
  scaleSizes: number[];
  cliRuns: number;
  /** LLM workload: chunks of the streamed answer, the fake provider's gap between them (ms). */
  llmChunks: number;
  llmGapMs: number;
  /** LLM workload: model steps with a tool call in the tool-loop turn. */
  llmToolSteps: number;
  only: Set<string> | undefined;
  /** An admin URL of a PostgreSQL server for the `postgres` workload (`--pg-url=`, else CA_BENCH_PG_URL or CA_TEST_PG_URL). */
  pgUrl: string | undefined;
}

export const WORKLOADS = [
  'unary',
  'streaming',
  'stdio',
  'memory',
  'scale',
  'cli',
  'confine',
  'llm',
  'context',
  'auth',
  'postgres',
  'plan',
] as const;

export function parseArgs(argv: string[]): BenchConfig {
  const quick = argv.includes('--quick');
  const onlyArg = argv.find((a) => a.startsWith('--only='));
  const only = onlyArg ? new Set(onlyArg.slice('--only='.length).split(',')) : undefined;
  for (const w of only ?? []) {
    if (!(WORKLOADS as readonly string[]).includes(w))
      throw new Error(`unknown workload ${w}; choose from ${WORKLOADS.join(', ')}`);
  }
  const sizesArg = argv.find((a) => a.startsWith('--scale='));
  const pgArg = argv.find((a) => a.startsWith('--pg-url='));
  return {
    quick,
    rounds: quick ? 3 : 5,
    windowMs: quick ? 700 : 2_000,
    warmupMs: quick ? 3_000 : 6_000,
    maxRequests: 200_000,
    connections: 16,
    peakConnections: [16, 32, 64],
    streamSizes: [10, 100, 1000],
    streamConnections: 16,
    sseSubscriptions: 10_000,
    scaleSizes: sizesArg
      ? sizesArg.slice('--scale='.length).split(',').map(Number)
      : quick
        ? [1_000, 100_000]
        : [1_000, 100_000, 1_000_000],
    cliRuns: quick ? 5 : 11,
    llmChunks: quick ? 500 : 2_000,
    llmGapMs: 1,
    llmToolSteps: 100,
    only,
    pgUrl:
      pgArg?.slice('--pg-url='.length) || process.env['CA_BENCH_PG_URL'] || process.env['CA_TEST_PG_URL'] || undefined,
  };
}
