/**
 * `npm run bench`: CleverAgents' A2A server against the `@a2a-js/sdk` reference stack and a bare
 * node:http floor, measured in the same run (see docs/performance.md). `--quick` for a short run,
 * `--only=unary,streaming,stdio,memory,scale,cli,confine,llm,context,auth,postgres,plan` for some workloads, `--scale=1000,100000` for
 * other store sizes. Every server listens on 127.0.0.1 only; every loop is bounded in count and time.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, WORKLOADS, type BenchConfig } from './lib/config.ts';
import { machineLoad, setupPinning } from './lib/proc.ts';
import { Report } from './lib/report.ts';
import { DIST } from './lib/servers.ts';
import { authWorkload } from './workloads/auth.ts';
import { cliWorkload } from './workloads/cli.ts';
import { confineWorkload } from './workloads/confine.ts';
import { contextWorkload } from './workloads/context.ts';
import { llmWorkload } from './workloads/llm.ts';
import { planGitWorkload } from './workloads/plan-git.ts';
import { postgresWorkload } from './workloads/postgres.ts';
import { scaleWorkload } from './workloads/scale.ts';
import { sseMemoryWorkload } from './workloads/sse-memory.ts';
import { stdioWorkload } from './workloads/stdio.ts';
import { streamingWorkload } from './workloads/streaming.ts';
import { unaryWorkload } from './workloads/unary.ts';

type Workload = (cfg: BenchConfig, report: Report, log: (s: string) => void) => void | Promise<void>;
const RUNNERS: Record<(typeof WORKLOADS)[number], Workload[]> = {
  unary: [unaryWorkload],
  streaming: [streamingWorkload],
  stdio: [stdioWorkload],
  memory: [sseMemoryWorkload],
  scale: [scaleWorkload],
  cli: [cliWorkload],
  confine: [confineWorkload],
  llm: [llmWorkload],
  context: [contextWorkload],
  auth: [authWorkload],
  postgres: [postgresWorkload],
  plan: [planGitWorkload],
};

async function main(): Promise<number> {
  const cfg = parseArgs(process.argv.slice(2));
  const pin = setupPinning();
  const m0 = machineLoad();
  const report = new Report();
  const log = (s: string): void => void process.stderr.write(`  ${s}\n`);
  const started = performance.now();
  process.stderr.write(
    `bench: ${cfg.quick ? 'quick' : 'full'} run, ${cfg.rounds} alternating rounds per figure (medians), node ${process.version}\n` +
      `machine: ${m0.cores} cores (${m0.model}), load average ${m0.load1.toFixed(2)} at start; ${pin.note}\n`,
  );
  let failed = false;
  for (const name of WORKLOADS) {
    if (cfg.only && !cfg.only.has(name)) continue;
    process.stderr.write(`${name}…\n`);
    const t0 = performance.now();
    try {
      for (const run of RUNNERS[name]) await run(cfg, report, log);
    } catch (err) {
      failed = true;
      process.stderr.write(`  ${name} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    log(`(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const m1 = machineLoad();
  const header =
    `CleverAgents bench — ${new Date().toISOString()} — ${cfg.quick ? 'quick' : 'full'} run in ${((performance.now() - started) / 1000).toFixed(0)} s\n` +
    `${m1.cores} cores (${m1.model}); load average ${m0.load1.toFixed(2)} at start, ${m1.load1.toFixed(2)} at end; ${pin.note}; node ${process.version}\n` +
    `medians of ${cfg.rounds} alternating rounds; reference = @a2a-js/sdk 1.3 (express + DefaultRequestHandler + InMemoryTaskStore); floor = bare node:http (stdio: NDJSON echo child)\n`;
  const text = `${header}\n${report.render()}\n`;
  process.stdout.write(`\n${text}`);
  const missed = report.figures.filter((f) => f.met === false);
  if (failed) process.stdout.write('\nsome workloads FAILED (see above); their figures are missing\n');
  process.stdout.write(
    missed.length === 0
      ? '\nno target missed among the figures above\n'
      : `\ntargets missed: ${missed.map((f) => `${f.workload} — ${f.metric}`).join('; ')}\n`,
  );
  const dir = join(DIST, 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'last-run.txt'), text);
  writeFileSync(
    join(dir, 'last-run.json'),
    JSON.stringify(
      { config: { ...cfg, only: cfg.only ? [...cfg.only] : undefined }, figures: report.figures },
      null,
      2,
    ),
  );
  return failed ? 1 : 0;
}

process.exitCode = await main();
