/**
 * Workload 9: context assembly (the context service with the file inventory of a git checkout) on
 * a generated repository of 100,000 files — 100 packages × 10 modules × 100 files, each importing
 * its neighbour, one commit — against a floor measured in the same run and process: `git
 * ls-files` (the same command the inventory runs) plus an lstat of every file it lists.
 *
 * Rounds alternate floor and cold assembly (a new inventory and service each round: nothing
 * cached, the OS page cache as warm as for the floor); each cold assembly is followed by a second
 * one on the same service (the tree unchanged). The tokenizer's tables are loaded once before
 * the rounds (a once-per-process cost, not an assembly's). Memory: the V8 heap after a gc (exposed
 * for the run) before a first service and after its two assemblies, with its listing and caches
 * still held (that round also warms the JIT; it is not timed), and the process's rss then.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BenchConfig } from '../lib/config.ts';
import type { Report } from '../lib/report.ts';
import { tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';
import { ContextService } from '../../src/application/context/context.service.ts';
import { FsFileInventory, GptTokenCounter } from '../../src/infrastructure/index.ts';

const PACKAGES = 100;
const MODULES = 10;
const FILES = 100;
const WORDS = ['parser', 'date', 'server', 'client', 'config', 'router', 'cache', 'store', 'model', 'view'];
const GOAL = 'fix the date parser in pkg7';
const BUDGET = 50_000;

/**
 * The repository through `git fast-import` (one pack, no loose objects) and one `git reset --hard`
 * that writes the work tree and the index: an order of magnitude fewer file-system calls than
 * writing the files and `git add`, which matters on a loaded machine.
 */
function generate(root: string, log: (s: string) => void): number {
  const t0 = performance.now();
  mkdirSync(root, { recursive: true });
  const name = (c: number): string => `${WORDS[c % WORDS.length] as string}-${c}`;
  const parts: string[] = [
    'commit refs/heads/main\ncommitter bench <bench@example.invalid> 1767225600 +0000\ndata 9\ngenerated\n',
  ];
  const file = (path: string, content: string): void =>
    void parts.push(`M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
  let n = 0;
  for (let a = 0; a < PACKAGES; a++)
    for (let b = 0; b < MODULES; b++)
      for (let c = 0; c < FILES; c++) {
        const imp = c > 0 ? `import { v${c - 1} } from './${name(c - 1)}.js';\n` : '';
        file(`pkg${a}/mod${b}/${name(c)}.ts`, `${imp}export const v${c} = ${n++}; // module ${a}.${b}.${c}\n`);
      }
  file('.gitignore', 'node_modules/\n*.log\n');
  const git = (args: string[], input?: string): void =>
    void execFileSync('git', ['-C', root, ...args], { input, stdio: ['pipe', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
  git(['init', '-q', '-b', 'main']);
  // No automatic gc: a background one would still be writing .git when the tree is removed.
  git(['config', 'gc.auto', '0']);
  git(['config', 'maintenance.auto', 'false']);
  git(['fast-import', '--quiet'], parts.join(''));
  git(['reset', '-q', '--hard']);
  log(`generated ${n + 1} files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return n + 1;
}

/** The floor: the inventory's own `git ls-files` and an lstat of each path, nothing else. */
function floor(root: string): { ms: number; files: number } {
  const t0 = performance.now();
  const out = execFileSync(
    'git',
    ['-C', root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'],
    { encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  let files = 0;
  for (const p of out.split('\0'))
    if (p !== '' && lstatSync(`${root}/${p}`, { throwIfNoEntry: false })?.isFile()) files++;
  return { ms: performance.now() - t0, files };
}

export async function contextWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const dir = tempDir('context');
  const root = join(dir, 'repo');
  try {
    const count = generate(root, log);
    const project = {
      name: 'local/bench',
      resources: ['local/bench'],
      settings: { context: { tokenBudget: BUDGET } },
    };
    const lookup = (kind: string, name: string): Promise<unknown> =>
      Promise.resolve(
        kind === 'project'
          ? { kind, name, definition: project }
          : kind === 'resource'
            ? { kind, name, definition: { name, type: 'git-checkout', path: root } }
            : undefined,
      );
    const registry = {
      lookup,
      // What a resource's use resolves to once its capabilities are checked (none here: local mode).
      use: lookup,
      visible: () => Promise.reject(new Error('not used')),
      update: () => Promise.reject(new Error('not used')),
    } as unknown as ConstructorParameters<typeof ContextService>[0]['registry'];
    const tokens = new GptTokenCounter();
    await tokens.count('load the tables');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (() => void) | undefined;

    const input = { project: project.name, view: 'execute' as const, goal: GOAL };
    // Memory (and warm-up): one service, before the timed rounds, so that nothing else is alive.
    gc?.();
    const m0 = process.memoryUsage();
    const held = new ContextService({ registry, inventory: new FsFileInventory(), tokens });
    const first = await held.assemble(input);
    const again = await held.assemble(input);
    gc?.();
    const m1 = process.memoryUsage();
    // The heap delta is what the service holds; rss is the process's whole (its delta after a gc is noise).
    const mem = { rss: m1.rss / 2 ** 20, heap: (m1.heapUsed - m0.heapUsed) / 2 ** 20 };
    if (first.inventory[0]?.files !== count) throw new Error(`assembly listed ${first.inventory[0]?.files} files`);
    if (again.snapshot !== first.snapshot) throw new Error('the second assembly of an unchanged tree differs');
    const included = first.totals.included;

    const measured = performance.now();
    const floors: number[] = [];
    const colds: number[] = [];
    const seconds: number[] = [];
    for (let r = 0; r < cfg.rounds; r++) {
      const f = floor(root);
      if (f.files !== count) throw new Error(`floor listed ${f.files} files, generated ${count}`);
      floors.push(f.ms);
      const svc = new ContextService({ registry, inventory: new FsFileInventory(), tokens });
      let t0 = performance.now();
      await svc.assemble(input);
      colds.push(performance.now() - t0);
      t0 = performance.now();
      await svc.assemble(input);
      seconds.push(performance.now() - t0);
    }
    log(`measured ${cfg.rounds} rounds in ${((performance.now() - measured) / 1000).toFixed(1)} s`);
    const fl = median(floors);
    const cold = median(colds);
    const second = median(seconds);
    const workload = `context (${count.toLocaleString('en')} files)`;
    report.add({ workload, metric: 'floor: git ls-files + lstat each', unit: 'ms', ours: fl });
    report.add({
      workload,
      metric: `cold assembly (${included} files included)`,
      unit: 'ms',
      ours: cold,
      floor: fl,
    });
    report.add({
      workload,
      metric: 'second assembly, tree unchanged',
      unit: 'ms',
      ours: second,
      floor: fl,
    });
    report.add({ workload, metric: 'second ÷ cold', unit: '%', ours: (100 * second) / cold });
    report.add({ workload, metric: 'V8 heap held by a service with the listing cached', unit: 'MiB', ours: mem.heap });
    report.add({ workload, metric: 'rss of the bench process then', unit: 'MiB', ours: mem.rss });
  } finally {
    const t0 = performance.now();
    // rm(1) unlinks 100k files several times faster than fs.rmSync's JavaScript walk.
    try {
      execFileSync('rm', ['-rf', '--', dir], { stdio: 'ignore' });
    } catch {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    }
    log(`removed the repository in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}
