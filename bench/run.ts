/**
 * `npm run bench` (`npm run build && node bench/run.ts`): CleverAgents' A2A server against the
 * `@a2a-js/sdk` reference stack, a bare node:http floor and a persisted floor, measured in the same
 * run, and judged on the targets of bench/lib/targets.ts (see docs/performance.md). `--quick` for a
 * short run, `--only=unary,streaming,stdio,memory,scale,cli,confine,llm,context,auth,postgres,plan`
 * for some workloads, `--scale=1000,100000` for other store sizes, `--pg-url=` for the PostgreSQL
 * server of `postgres` (else CA_BENCH_PG_URL or CA_TEST_PG_URL). Every server listens on 127.0.0.1
 * only; every loop is bounded in count and time.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, WORKLOADS, type BenchConfig } from './lib/config.ts';
import { machineLoad, setupPinning, takeDeaths } from './lib/proc.ts';
import { Report } from './lib/report.ts';
import { BIN, DIST } from './lib/servers.ts';
import { redactUrl } from '../src/infrastructure/persistence/postgres/pg-url.ts';

type Workload = (cfg: BenchConfig, report: Report, log: (s: string) => void) => void | Promise<void>;
/**
 * Each workload's module is loaded when it runs: a run loads only what it measures, and a module
 * that cannot load (one of the sources it imports no longer builds) fails its workload, not the run.
 */
const RUNNERS: Record<(typeof WORKLOADS)[number], () => Promise<Workload>> = {
  unary: async () => (await import('./workloads/unary.ts')).unaryWorkload,
  streaming: async () => (await import('./workloads/streaming.ts')).streamingWorkload,
  stdio: async () => (await import('./workloads/stdio.ts')).stdioWorkload,
  memory: async () => (await import('./workloads/sse-memory.ts')).sseMemoryWorkload,
  scale: async () => (await import('./workloads/scale.ts')).scaleWorkload,
  cli: async () => (await import('./workloads/cli.ts')).cliWorkload,
  confine: async () => (await import('./workloads/confine.ts')).confineWorkload,
  llm: async () => (await import('./workloads/llm.ts')).llmWorkload,
  context: async () => (await import('./workloads/context.ts')).contextWorkload,
  auth: async () => (await import('./workloads/auth.ts')).authWorkload,
  postgres: async () => (await import('./workloads/postgres.ts')).postgresWorkload,
  plan: async () => (await import('./workloads/plan-git.ts')).planGitWorkload,
};

async function main(): Promise<number> {
  const cfg = parseArgs(process.argv.slice(2));
  if (!existsSync(BIN)) {
    process.stderr.write(`bench: ${BIN} is missing; \`npm run build\` makes it (\`npm run bench\` builds first)\n`);
    return 2;
  }
  const pin = setupPinning();
  const m0 = machineLoad();
  const report = new Report();
  const log = (s: string): void => void process.stderr.write(`  ${s}\n`);
  const started = performance.now();
  process.stderr.write(
    `bench: ${cfg.quick ? 'quick' : 'full'} run, ${cfg.rounds} alternating rounds per figure (medians), node ${process.version}\n` +
      `machine: ${m0.cores} cores (${m0.model}), load average ${m0.load1.toFixed(2)} at start; ${pin.note}\n`,
  );
  const failed: string[] = [];
  const ran = new Set<string>();
  for (const name of WORKLOADS) {
    if (cfg.only && !cfg.only.has(name)) continue;
    ran.add(name);
    process.stderr.write(`${name}…\n`);
    const t0 = performance.now();
    try {
      const run = await RUNNERS[name]();
      await run(cfg, report, log);
    } catch (err) {
      failed.push(name);
      process.stderr.write(`  ${name} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    for (const death of takeDeaths()) process.stderr.write(`  ${death}\n`);
    log(`(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const m1 = machineLoad();
  const header =
    `CleverAgents bench — ${new Date().toISOString()} — ${cfg.quick ? 'quick' : 'full'} run in ${((performance.now() - started) / 1000).toFixed(0)} s\n` +
    `${m1.cores} cores (${m1.model}); load average ${m0.load1.toFixed(2)} at start, ${m1.load1.toFixed(2)} at end; ${pin.note}; node ${process.version}\n` +
    `medians of ${cfg.rounds} alternating rounds; reference = @a2a-js/sdk 1.3 (express + DefaultRequestHandler + InMemoryTaskStore); ` +
    `floor = bare node:http, storing nothing (stdio: NDJSON echo child; plan: bare git; CLI: node -e 0); ` +
    `persisted = bare node:http + better-sqlite3 (WAL, synchronous NORMAL, one commit per event-loop turn)\n`;
  const verdicts = report.verdicts(ran);
  const lines = [
    header,
    report.render(),
    '',
    'targets (bench/lib/targets.ts; every other row is context), both sides measured in this run:',
    '',
    report.renderTargets(verdicts),
    ...report.notes.map((n) => `note: ${n}`),
    ...(failed.length > 0 ? ['', `workloads FAILED (see above; their figures are missing): ${failed.join(', ')}`] : []),
  ];
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(`\n${text}`);
  const dir = join(DIST, 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'last-run.txt'), text);
  const judged = verdicts.map((v) => ({
    target: v.target.name,
    workload: v.target.workload,
    metric: v.figure?.metric,
    ours: v.ours,
    required: `${v.target.op} ${'bound' in v.target.against ? v.target.against.bound : `${v.target.against.times}x ${v.target.against.label}`}`,
    base: v.base,
    met: v.met ?? null,
  }));
  writeFileSync(
    join(dir, 'last-run.json'),
    JSON.stringify(
      {
        config: { ...cfg, only: cfg.only ? [...cfg.only] : undefined, pgUrl: cfg.pgUrl && redactUrl(cfg.pgUrl) },
        figures: report.figures,
        targets: judged,
      },
      null,
      2,
    ),
  );
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
