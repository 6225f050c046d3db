/**
 * Workload 7: wall time of `agents --help`, `agents --version` and `agents health` in local mode
 * (the CLI spawns `agents serve --stdio`, handshakes, asks, exits), each against `node -e 0`.
 * The `agents` run is the package's `bin`, as a user runs it.
 * hyperfine when installed, else alternating spawns. Not pinned: the CLI and the agent it spawns
 * may use both cores, as on a user's machine.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchConfig } from '../lib/config.ts';
import type { Report } from '../lib/report.ts';
import { DIST, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';

/** The package's `agents` bin, as package.json names it. */
function agentsBin(): string {
  const pkg = JSON.parse(readFileSync(join(DIST, '..', 'package.json'), 'utf8')) as { bin: { agents: string } };
  return join(DIST, '..', pkg.bin.agents);
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
  /** The target: at most this many times `node -e 0`. */
  times: number;
}

export function cliWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): void {
  const dataDir = tempDir('cli');
  const bin = agentsBin();
  const rows: Row[] = [
    { name: 'agents --help', args: [bin, '--help'], times: 2 },
    { name: 'agents --version', args: [bin, '--version'], times: 2 },
    { name: 'agents health', args: [bin, 'health', '--data-dir', dataDir, '--format', 'plain'], times: 3 },
  ];
  try {
    // The first call creates the database; later calls are what a user sees day to day.
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
    rows.forEach((row, j) => {
      const ours = agents[j] ?? Number.NaN;
      const floor = node[j] ?? Number.NaN;
      log(`${row.name}: ${ours.toFixed(0)} ms, node -e 0: ${floor.toFixed(0)} ms (${how})`);
      report.add({
        workload: 'CLI',
        metric: `\`${row.name}\`${row.name === 'agents health' ? ' local' : ''}, wall (${how})`,
        unit: 'ms',
        ours,
        floor,
        target: `<= ${row.times}x node -e 0`,
        met: ours <= row.times * floor,
      });
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
