/**
 * Workload 8: start-up overhead of a confined command — `true` run through bubblewrap (the argv,
 * masks, namespaces, rlimits and, where writable, the pids cgroup every plan command gets) against
 * a bare spawn of the same `true`, alternating, in the same run, through the same process runner.
 * Skipped (with a note) where bubblewrap cannot be used.
 */
import { homedir } from 'node:os';
import { rmSync } from 'node:fs';
import type { BenchConfig } from '../lib/config.ts';
import type { Report } from '../lib/report.ts';
import { tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';
import { CommandConfinement } from '../../src/infrastructure/index.ts';
import { runConfined, runProcess } from '../../src/infrastructure/tools/process-runner.ts';

export async function confineWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const confinement = await CommandConfinement.probe({ mode: 'bubblewrap', home: homedir(), secrets: [] });
  // The same without the pids cgroup: joining one is a cost of its own (cgroup v1 task migration).
  const noCgroup = await CommandConfinement.probe({
    mode: 'bubblewrap',
    home: homedir(),
    secrets: [],
    pidsCgroup: null,
  });
  if (confinement.mode !== 'bubblewrap') {
    report.note(`confined commands: not measured (${confinement.describe()})`);
    return;
  }
  const root = tempDir('confine');
  const signal = new AbortController().signal;
  const bare = async (): Promise<number> => {
    const t0 = performance.now();
    const r = await runProcess({ program: 'true', args: [], cwd: root, timeoutMs: 10_000, signal });
    if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}: ${r.output}`);
    return performance.now() - t0;
  };
  const confined = async (c = confinement): Promise<number> => {
    const t0 = performance.now();
    const r = await runConfined(
      c,
      { program: 'true', args: [], cwd: root, sandboxRoot: root, network: 'none' },
      { timeoutMs: 10_000, signal },
    );
    if (r.exitCode !== 0) throw new Error(`confined true exited ${r.exitCode}: ${r.spawnError ?? r.output}`);
    return performance.now() - t0;
  };
  try {
    await bare();
    await confined();
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    const runs = cfg.quick ? 30 : 100;
    for (let i = 0; i < runs; i++) {
      a.push(await bare());
      b.push(await confined());
      if (confinement.boundsProcesses) c.push(await confined(noCgroup));
    }
    const plain = median(a);
    const boxed = median(b);
    if (confinement.boundsProcesses) {
      const lean = median(c);
      log(`without the pids cgroup: confined ${lean.toFixed(1)} ms (+${(lean - plain).toFixed(1)} ms)`);
      report.add({
        workload: 'confined commands',
        metric: `the same without the pids cgroup (CLEVERAGENTS_COMMAND_MAX_PROCESSES=0; overhead +${(lean - plain).toFixed(1)} ms)`,
        unit: 'ms',
        ours: lean,
        floor: plain,
      });
    }
    const overhead = boxed - plain;
    log(
      `true: bare ${plain.toFixed(1)} ms, confined ${boxed.toFixed(1)} ms (×${(boxed / plain).toFixed(1)}, +${overhead.toFixed(1)} ms; ${confinement.describe()})`,
    );
    report.add({
      workload: 'confined commands',
      metric: `\`true\` start-to-exit, confined vs bare spawn (${runs} alternating runs; overhead +${overhead.toFixed(1)} ms, ×${(boxed / plain).toFixed(1)})`,
      unit: 'ms',
      ours: boxed,
      floor: plain,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
