/**
 * Workload 7: wall time of `agents health` in local mode (the CLI spawns `agents serve --stdio`,
 * handshakes, asks, exits) against `node -e 0`. hyperfine when installed, else alternating spawns.
 * Not pinned: the CLI and the agent it spawns may use both cores, as on a user's machine.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchConfig } from '../lib/config.js';
import type { Report } from '../lib/report.js';
import { BIN, tempDir } from '../lib/servers.js';
import { median } from '../lib/stats.js';

function wallMs(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
  return ms;
}

function hyperfine(cfg: BenchConfig, health: string[]): { node: number; health: number } | undefined {
  const probe = spawnSync('hyperfine', ['--version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return undefined;
  const out = join(tempDir('hyperfine'), 'out.json');
  const q = (a: string[]): string => [process.execPath, ...a].map((s) => `'${s}'`).join(' ');
  const r = spawnSync(
    'hyperfine',
    ['-N', '--warmup', '2', '--runs', String(cfg.cliRuns), '--export-json', out, q(['-e', '0']), q(health)],
    { stdio: 'ignore', timeout: 120_000 },
  );
  if (r.status !== 0) return undefined;
  const res = (JSON.parse(readFileSync(out, 'utf8')) as { results: Array<{ median: number }> }).results;
  return { node: (res[0]?.median ?? Number.NaN) * 1000, health: (res[1]?.median ?? Number.NaN) * 1000 };
}

export function cliWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): void {
  const dataDir = tempDir('cli');
  const health = [BIN, 'health', '--data-dir', dataDir, '--format', 'plain'];
  try {
    // The first call creates the database; later calls are what a user sees day to day.
    wallMs(health);
    let node: number;
    let agents: number;
    let how: string;
    const hf = hyperfine(cfg, health);
    if (hf) {
      ({ node, health: agents } = hf);
      how = 'hyperfine';
    } else {
      const a: number[] = [];
      const b: number[] = [];
      wallMs(['-e', '0']);
      for (let i = 0; i < cfg.cliRuns; i++) {
        a.push(wallMs(['-e', '0']));
        b.push(wallMs(health));
      }
      node = median(a);
      agents = median(b);
      how = `${cfg.cliRuns} alternating spawns`;
    }
    log(`agents health: ${agents.toFixed(0)} ms, node -e 0: ${node.toFixed(0)} ms (${how})`);
    report.add({
      workload: 'CLI',
      metric: `\`agents health\` local, wall (${how})`,
      unit: 'ms',
      ours: agents,
      floor: node,
      target: '<= 5x node -e 0',
      met: agents <= 5 * node,
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
