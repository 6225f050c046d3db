/**
 * The bench's targets (issue #36, "The performance targets, restated"), declared once. `npm run
 * bench` judges these rows and no others; every other row it prints is context. A target names the
 * row it judges by the row's workload and a pattern of its metric (metrics carry their conditions,
 * such as the concurrency a server peaked at), and compares ours with another side of the same row,
 * measured in the same run, or with a bound in the row's unit.
 */
import type { WORKLOADS } from './config.ts';

/** The other sides of a row: the reference, the bare floor (or a workload's own), the persisted floor. */
export type Side = 'reference' | 'floor' | 'persisted';

export interface Target {
  /** How the summary names it. */
  name: string;
  /** The `--only` workload that measures it; a target of a workload left out of the run is not listed. */
  group: (typeof WORKLOADS)[number];
  /** The row it judges. */
  workload: string;
  metric: RegExp;
  op: '>=' | '<=';
  /** A multiple of another side of the row (`label` says what that side is here), or a bound. */
  against: { side: Side; times: number; label: string } | { bound: number };
}

const atLeast = (times: number, side: Side, label: string) => ({ op: '>=' as const, against: { side, times, label } });
const atMost = (times: number, side: Side, label: string) => ({ op: '<=' as const, against: { side, times, label } });

const sendMessage = (conns: number): Target[] => [
  {
    name: `SendMessage @${conns} conns vs the persisted floor`,
    group: 'unary',
    workload: 'SendMessage',
    metric: new RegExp(`^throughput @${conns} conns`),
    ...atLeast(0.8, 'persisted', 'persisted floor'),
  },
  {
    name: `SendMessage @${conns} conns vs the reference`,
    group: 'unary',
    workload: 'SendMessage',
    metric: new RegExp(`^throughput @${conns} conns`),
    ...atLeast(1.5, 'reference', 'reference'),
  },
];

const streaming = (n: number, times: number): Target => ({
  name: `streaming n = ${n} vs the reference`,
  group: 'streaming',
  workload: `SendStreamingMessage n=${n}`,
  metric: /^events\/s/,
  ...atLeast(times, 'reference', 'reference'),
});

const plan = (name: string, metric: RegExp, times: number): Target => ({
  name,
  group: 'plan',
  workload: 'plan (10k files)',
  metric,
  ...atMost(times, 'floor', 'bare git'),
});

export const TARGETS: readonly Target[] = [
  ...sendMessage(16),
  ...sendMessage(32),
  ...sendMessage(64),
  {
    name: 'GetTask, peak of 16/32/64 conns, vs the persisted floor',
    group: 'unary',
    workload: 'GetTask',
    metric: /^peak throughput/,
    ...atLeast(0.5, 'persisted', 'persisted floor'),
  },
  {
    name: 'GetTask, peak of 16/32/64 conns, vs the reference',
    group: 'unary',
    workload: 'GetTask',
    metric: /^peak throughput/,
    ...atLeast(1.5, 'reference', 'reference'),
  },
  streaming(10, 2),
  streaming(100, 10),
  streaming(1000, 10),
  {
    name: 'stdio GetTask, 32 in flight, vs the echo child',
    group: 'stdio',
    workload: 'stdio GetTask, 32 in flight',
    metric: /^round trips\/s/,
    ...atLeast(0.45, 'floor', 'echo child'),
  },
  {
    name: 'idle RSS of a fresh server vs the reference',
    group: 'unary',
    workload: 'memory',
    metric: /^RSS of a freshly started server/,
    ...atMost(1.25, 'reference', 'reference'),
  },
  {
    name: 'RSS added by 10,000 idle SSE streams vs the floor',
    group: 'memory',
    workload: 'memory',
    metric: /^RSS added by [\d,]+ idle SSE streams/,
    ...atMost(1.2, 'floor', 'floor'),
  },
  plan('plan: sandbox creation vs `git worktree add -b`', /^sandbox creation/, 1.2),
  plan('plan: checkpoint vs `git add -A && git commit`', /^checkpoint after a one-file write/, 1.5),
  plan('plan: `plan diff` vs `git diff` + `git diff --stat`', /^`plan diff`/, 1.3),
  {
    name: 'plan: 100-step plan, overhead per step',
    group: 'plan',
    workload: 'plan',
    metric: /^\d+-step write-file plan, per-step overhead/,
    op: '<=',
    against: { bound: 25 },
  },
  {
    name: 'chat: "hello" on a 400-file project, request tokens (map)',
    group: 'llm',
    workload: 'LLM chat context, "hello" on a 400-file project',
    metric: /^request tokens, repository map/,
    op: '<=',
    against: { bound: 12_000 },
  },
  {
    name: 'chat: the agent loop, per-step overhead (HTTP)',
    group: 'llm',
    workload: 'LLM tool loop (read-file steps)',
    metric: /^per-step overhead \(ours − floor\) ÷ \d+, HTTP SSE/,
    op: '<=',
    against: { bound: 5 },
  },
  {
    name: 'SendMessage on 1 PostgreSQL instance vs 1 SQLite instance',
    group: 'postgres',
    workload: 'SendMessage on PostgreSQL',
    metric: /^throughput @\d+ conns/,
    ...atLeast(0.5, 'reference', 'SQLite'),
  },
  {
    name: 'SendMessage on PostgreSQL: round trips that write, per blocking message',
    group: 'postgres',
    workload: 'SendMessage on PostgreSQL, statements per message',
    metric: /^round trips that write/,
    op: '<=',
    against: { bound: 3 },
  },
  {
    name: '`agents health` (local) vs `node -e 0`',
    group: 'cli',
    workload: 'CLI',
    metric: /^`agents health` local,/,
    ...atMost(3, 'floor', 'node -e 0'),
  },
  {
    name: '`agents --version` vs `node -e 0`',
    group: 'cli',
    workload: 'CLI',
    metric: /^`agents --version`,/,
    ...atMost(1.5, 'floor', 'node -e 0'),
  },
];
