/**
 * Workload 7: wall time of `agents --help`, `agents --version` and `agents health` in local mode
 * (the CLI spawns `agents serve --stdio`, handshakes, asks, exits), each against `node -e 0`
 * measured in the same run. Targets (issue 36): `--version` within 1.5× and `health` within 3×
 * `node -e 0`; `--help` is context. When `health` misses its target, its phases follow, from the
 * marks the CLI and its agent write (src/main/startup-marks.ts), so the table shows where the
 * milliseconds go. The `agents` run is the package's `bin`, as a user runs it, with its compile
 * cache warm (what a user sees from the second command on).
 * hyperfine when installed, else alternating spawns. Not pinned: the CLI and the agent it spawns
 * may use both cores, as on a user's machine.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchConfig } from '../lib/config.ts';
import type { Report } from '../lib/report.ts';
import { ROOT, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';
import { STARTUP_MARKS_ENV } from '../../src/main/startup-marks.ts';

/** The package's `agents` bin, as package.json names it. */
function agentsBin(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { agents: string } };
  return join(ROOT, pkg.bin.agents);
}

function wallMs(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
  return ms;
}

/** Median wall time (ms) of each command, hyperfine's; `node -e 0` is prepended and comes first. */
function hyperfine(cfg: BenchConfig, commands: string[][]): number[] | undefined {
  const probe = spawnSync('hyperfine', ['--version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return undefined;
  const out = join(tempDir('hyperfine'), 'out.json');
  const q = (a: string[]): string => [process.execPath, ...a].map((s) => `'${s}'`).join(' ');
  const r = spawnSync(
    'hyperfine',
    ['-N', '--warmup', '2', '--runs', String(cfg.cliRuns), '--export-json', out, ...[['-e', '0'], ...commands].map(q)],
    { stdio: 'ignore', timeout: 300_000 },
  );
  if (r.status !== 0) return undefined;
  const res = (JSON.parse(readFileSync(out, 'utf8')) as { results: Array<{ median: number }> }).results;
  return res.map((x) => x.median * 1000);
}

interface Row {
  name: string;
  args: string[];
  /** Its target (bench/lib/targets.ts judges it): at most this many times `node -e 0`; here it decides whether the phases are shown. */
  times?: number;
}

export function cliWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): void {
  const dataDir = tempDir('cli');
  const bin = agentsBin();
  const rows: Row[] = [
    { name: 'agents --help', args: [bin, '--help'] },
    { name: 'agents --version', args: [bin, '--version'], times: 1.5 },
    { name: 'agents health', args: [bin, 'health', '--data-dir', dataDir, '--format', 'plain'], times: 3 },
  ];
  try {
    // The first call creates the database and fills the compile cache; later calls are what a user
    // sees day to day.
    for (const row of rows) wallMs(row.args);
    let node: number[];
    let agents: number[];
    let how: string;
    const hf = hyperfine(
      cfg,
      rows.map((r) => r.args),
    );
    if (hf) {
      // hyperfine runs each command's rounds in turn: one `node -e 0` figure for all rows.
      node = rows.map(() => hf[0] ?? Number.NaN);
      agents = rows.map((_, i) => hf[i + 1] ?? Number.NaN);
      how = 'hyperfine';
    } else {
      // Each row's `node -e 0` is measured just before it, round after round.
      const a: number[][] = rows.map(() => []);
      const b: number[][] = rows.map(() => []);
      wallMs(['-e', '0']);
      for (let i = 0; i < cfg.cliRuns; i++)
        rows.forEach((row, j) => {
          a[j]?.push(wallMs(['-e', '0']));
          b[j]?.push(wallMs(row.args));
        });
      node = a.map(median);
      agents = b.map(median);
      how = `${cfg.cliRuns} alternating spawns`;
    }
    let healthMet = true;
    rows.forEach((row, j) => {
      const ours = agents[j] ?? Number.NaN;
      const floor = node[j] ?? Number.NaN;
      const met = row.times === undefined ? undefined : ours <= row.times * floor;
      if (row.name === 'agents health') healthMet = met === true;
      log(`${row.name}: ${ours.toFixed(0)} ms, node -e 0: ${floor.toFixed(0)} ms (${how})`);
      report.add({
        workload: 'CLI',
        metric: `\`${row.name}\`${row.name === 'agents health' ? ' local' : ''}, wall (${how})`,
        unit: 'ms',
        ours,
        floor,
      });
    });
    const health = rows.find((r) => r.name === 'agents health');
    if (!healthMet && health) healthPhases(cfg, report, log, health.args);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The phases of `agents health`, in order; each is the time from one mark to the next. */
const PHASES = [
  ['spawn', 'cli:main', 'CLI: node starts, checks its version, loads its entry'],
  ['cli:main', 'cli:commands-loaded', 'CLI: spawns the agent, loads the commands'],
  ['cli:commands-loaded', 'agent:client-wrote', 'CLI parses, connects, writes (or the agent loads, the later)'],
  ['agent:client-wrote', 'agent:ready', 'agent: its services, if still building, then serving'],
  ['agent:ready', 'cli:exit', 'request -> answer, CLI done'],
  ['cli:exit', 'end', 'CLI process exits'],
  // Off the sequence above, overlapping the CLI's loading: the agent's own start.
  ['cli:agent-spawned', 'agent:main', "agent: node starts, loads its entry (overlaps the CLI's)"],
  ['agent:main', 'agent:loaded', 'agent: loads serve modules (overlaps)'],
  ['agent:loaded', 'agent:built', 'agent: opens the data directory, builds services (overlaps)'],
] as const;

/** One run of `args` with marks on: each mark's time (ms since the spawn), or undefined when one is missing. */
function markedRun(args: string[], file: string): Map<string, number> | undefined {
  writeFileSync(file, '');
  const t0 = performance.timeOrigin + performance.now();
  const r = spawnSync(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000,
    env: { ...process.env, [STARTUP_MARKS_ENV]: file },
  });
  const end = performance.timeOrigin + performance.now();
  if (r.status !== 0) return undefined;
  const at = new Map<string, number>([
    ['spawn', 0],
    ['end', end - t0],
  ]);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  // The agent is the process that wrote agent marks; the CLI, the one whose pid is the child's.
  const agentPid = lines.find((l) => l.split('\t')[1]?.startsWith('agent:'))?.split('\t')[0];
  for (const line of lines) {
    const [pid, name, ms] = line.split('\t');
    if (!pid || !name || !ms) continue;
    const who = pid === String(r.pid) ? 'cli' : pid === agentPid ? 'agent' : undefined;
    if (!who) continue;
    const key = name.includes(':') ? name : `${who}:${name}`;
    if (!at.has(key)) at.set(key, Number(ms) - t0);
  }
  return at;
}

function healthPhases(cfg: BenchConfig, report: Report, log: (s: string) => void, args: string[]): void {
  const file = join(tempDir('cli-marks'), 'marks.tsv');
  const runs: Array<Map<string, number>> = [];
  for (let i = 0; i < cfg.cliRuns; i++) {
    const run = markedRun(args, file);
    if (run) runs.push(run);
  }
  rmSync(join(file, '..'), { recursive: true, force: true });
  for (const [from, to, what] of PHASES) {
    const ms = median(runs.map((m) => (m.get(to) ?? Number.NaN) - (m.get(from) ?? Number.NaN)));
    log(`agents health phase, ${what}: ${ms.toFixed(1)} ms`);
    report.add({ workload: 'CLI', metric: `\`agents health\` phase: ${what}`, unit: 'ms', ours: ms });
  }
}
