/**
 * Workload 12: a plan's git work on a 10,000-file repository (100 directories of 100 files,
 * deterministic content, one commit), each of our operations against the bare git commands a user
 * would type for the same effect, alternating, in the same run:
 *
 * 1. sandbox creation — `GitSandboxManager.create` (the code `plan execute` runs) vs `git worktree add -b`;
 * 2. one checkpoint after a one-file write — `GitSandboxManager.checkpoint` (its git inside the
 *    commands' confinement, as `agents serve` runs it, when bubblewrap works here) vs `git add -A &&
 *    git commit` in a worktree of its own;
 * 3. `plan diff` — `_cleveragents/plan/diff` through the A2A client against a real `agents serve
 *    --stdio` (what `agents plan diff` pays once its agent runs) vs `git diff <base>` then
 *    `git diff --stat <base>` in the plan's sandbox;
 * 4. a 100-step plan of `builtin/write-file` steps on a small repository, executed through the same
 *    client: per-step overhead = (execute wall − the tools' own time) / 100, the tools' time being
 *    the sum of the `durationMs` the agent records around each tool run (plan explain); logged
 *    beside it, alternating with the plans, what the same writes cost each followed by a bare
 *    `git add -A && git commit` (the git work a checkpoint cannot do without).
 *
 * The sandbox manager and the git commands run from this process; the agent on the server core.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BenchError } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { keptStderr, setupPinning } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { BIN, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';
import { GitSandboxManager } from '../../src/infrastructure/index.ts';
import { CommandConfinement } from '../../src/infrastructure/tools/confinement.ts';
import {
  A2AClient,
  actionRegistry,
  planDiff,
  planExecute,
  planExplain,
  planTree,
  planUse,
  projectRegistry,
  resourceRegistry,
} from '../../src/protocol/client/index.ts';
import type { ResourceDefinition } from '../../src/domain/registry/resource.definition.ts';

const run = promisify(execFile);
const DIRS = 100;
const FILES_PER_DIR = 100;
const STEPS = 100;
const IDENTITY = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};
const gitEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...IDENTITY, GIT_TERMINAL_PROMPT: '0' };
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return env;
};

/** `git -C dir …args` as a user types it; its stdout. */
async function bareGit(dir: string, ...args: string[]): Promise<string> {
  const r = await run('git', ['-C', dir, ...args], { env: gitEnv(), maxBuffer: 256 * 1024 * 1024 });
  return r.stdout;
}

/**
 * Round `i` of an alternating pair, ours first in even rounds and second in odd ones, so that
 * neither side always runs on the caches the other just warmed.
 */
async function pair(i: number, ours: () => Promise<number>, bare: () => Promise<number>): Promise<[number, number]> {
  if (i % 2 === 0) {
    const a = await ours();
    return [a, await bare()];
  }
  const b = await bare();
  return [await ours(), b];
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/** A repository on branch main with one commit of `dirs × perDir` files a few lines long. */
async function makeRepo(repo: string, dirs: number, perDir: number): Promise<void> {
  for (let d = 0; d < dirs; d++) {
    const dir = join(repo, `pkg${Math.floor(d / 10)}`, `mod${d % 10}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < perDir; f++) {
      const lines = Array.from({ length: 20 }, (_, l) => `export const v${l} = ${d * perDir + f + l}; // file ${f}`);
      writeFileSync(join(dir, `file${f}.ts`), `${lines.join('\n')}\n`);
    }
  }
  await bareGit(repo, 'init', '-q', '-b', 'main');
  await bareGit(repo, 'add', '-A');
  await bareGit(repo, 'commit', '-q', '-m', 'init');
}

const ONE_FILE = 'pkg0/mod0/file0.ts';

function stepsAction(name: string, steps: number): Record<string, unknown> {
  return {
    name,
    description: `Write ${steps} files, one step each`,
    descriptionTemplate: `Write ${steps} files`,
    definitionOfDone: 'the files exist',
    steps: Array.from({ length: steps }, (_, i) => ({
      tool: 'builtin/write-file',
      args: { path: `out/step${i}.txt`, content: `step ${i}\n` },
    })),
  };
}

const agentLog = keptStderr('the agent');

async function startAgent(dataDir: string): Promise<A2AClient> {
  const p = setupPinning();
  const args = [BIN, 'serve', '--stdio', '--data-dir', dataDir];
  const [command, argv] = p.enabled
    ? ['taskset', ['-c', String(p.serverCore), process.execPath, ...args]]
    : [process.execPath, args];
  const env = { ...process.env };
  delete env['CLEVERAGENTS_VALIDATE_RESULTS'];
  return A2AClient.local({ command, args: argv, env, clientInfo: { name: 'bench' }, ...agentLog.options });
}

/** Registers `repo` as resource and project `name`. */
async function registerRepo(client: A2AClient, name: string, repo: string): Promise<void> {
  await client.call(resourceRegistry.add, { definition: { name, type: 'git-checkout', path: repo, branch: 'main' } });
  await client.call(projectRegistry.add, { definition: { name, resources: [name] } });
}

/** A plan of `action` on `project`, strategized; its id. */
async function usePlan(client: A2AClient, action: string, project: string): Promise<string> {
  const r = await client.call(planUse, { action, projects: [project], wait: true });
  if (`${r.plan.phase}/${r.plan.state}` !== 'strategize/complete')
    throw new BenchError(`plan use ${action}: ${r.plan.phase}/${r.plan.state} ${JSON.stringify(r.plan.error)}`);
  return r.plan.planId;
}

async function executePlan(client: A2AClient, planId: string): Promise<void> {
  const r = await client.call(planExecute, { planId, wait: true, yes: true });
  if (`${r.plan.phase}/${r.plan.state}` !== 'execute/complete')
    throw new BenchError(`plan execute: ${r.plan.phase}/${r.plan.state} ${JSON.stringify(r.plan.error)}`);
}

export async function planGitWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const root = tempDir('plan');
  const repo = join(root, 'big');
  const rounds = cfg.quick ? 5 : 9;
  let client: A2AClient | undefined;
  try {
    const t0 = performance.now();
    await makeRepo(repo, DIRS, FILES_PER_DIR);
    log(`${DIRS * FILES_PER_DIR}-file repository made in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // The sandbox's git runs where `agents serve` runs it: in the commands' confinement.
    const confinement = await CommandConfinement.probe({ mode: 'bubblewrap', home: join(root, 'home'), secrets: [] });
    log(
      `sandbox git: ${confinement.mode === 'bubblewrap' ? 'confined (one helper per sandbox)' : confinement.describe()}`,
    );
    const manager = new GitSandboxManager({ root: join(root, 'sandboxes'), confinement });
    const resource: ResourceDefinition = { name: 'local/big', type: 'git-checkout', path: repo, branch: 'main' };

    // 1. Sandbox creation.
    const ours: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const [a, b] = await pair(
        i,
        async () => {
          let info;
          const ms = await timed(async () => (info = await manager.create(`bench-create-${i}`, resource)));
          if (info) await manager.remove(info);
          return ms;
        },
        async () => {
          const wt = join(root, `bare-create-${i}`);
          const ms = await timed(() => bareGit(repo, 'worktree', 'add', '-q', '-b', `bare-create-${i}`, wt, 'main'));
          await bareGit(repo, 'worktree', 'remove', '--force', wt);
          await bareGit(repo, 'branch', '-D', `bare-create-${i}`);
          return ms;
        },
      );
      ours.push(a);
      bare.push(b);
    }
    addRow(report, log, 'sandbox creation vs `git worktree add -b`', median(ours), median(bare), rounds);

    // 2. A checkpoint after a one-file write, in a sandbox and in a bare worktree of the same repository.
    const sandbox = await manager.create('bench-checkpoint', resource);
    const wt = join(root, 'bare-checkpoint');
    await bareGit(repo, 'worktree', 'add', '-q', '-b', 'bare-checkpoint', wt, 'main');
    ours.length = 0;
    bare.length = 0;
    for (let i = 0; i < rounds + 1; i++) {
      const [a, b] = await pair(
        i,
        () => {
          writeFileSync(join(sandbox.root, ONE_FILE), `round ${i}\n`);
          return timed(() => manager.checkpoint(sandbox, `round ${i}`));
        },
        () => {
          writeFileSync(join(wt, ONE_FILE), `round ${i}\n`);
          return timed(async () => {
            await bareGit(wt, 'add', '-A');
            await bareGit(wt, 'commit', '-q', '-m', `round ${i}`);
          });
        },
      );
      // The first round warms the page cache for both.
      if (i > 0) {
        ours.push(a);
        bare.push(b);
      }
    }
    addRow(
      report,
      log,
      'checkpoint after a one-file write vs `git add -A && git commit`',
      median(ours),
      median(bare),
      rounds,
    );
    await manager.remove(sandbox);
    manager.close();

    // 3. plan diff, through a real agent over stdio, of a plan that changed one file.
    const dataDir = join(root, 'agent');
    client = await startAgent(dataDir);
    await registerRepo(client, 'local/big', repo);
    await client.call(actionRegistry.add, {
      definition: {
        name: 'local/one-write',
        description: 'Rewrite one file',
        descriptionTemplate: 'Rewrite one file',
        definitionOfDone: 'the file is rewritten',
        steps: [{ tool: 'builtin/write-file', args: { path: ONE_FILE, content: 'rewritten\n' } }],
      },
    });
    const diffPlan = await usePlan(client, 'local/one-write', 'local/big');
    await executePlan(client, diffPlan);
    const base = (await bareGit(repo, 'rev-parse', 'main')).trim();
    const sandboxRoot = join(dataDir, 'sandboxes', diffPlan, 'local.big');
    const c = client;
    const oursDiff = async (): Promise<void> => {
      const d = await c.call(planDiff, { planId: diffPlan });
      const files = d.sandboxes.flatMap((s) => s.files);
      if (d.source !== 'sandbox' || files.length !== 1 || files[0]?.path !== ONE_FILE)
        throw new BenchError(`plan diff: ${d.source}, ${JSON.stringify(files).slice(0, 300)}`);
    };
    const bareDiff = async (): Promise<void> => {
      const patch = await bareGit(sandboxRoot, 'diff', base);
      await bareGit(sandboxRoot, 'diff', '--stat', base);
      if (!patch.includes(`+++ b/${ONE_FILE}`)) throw new BenchError(`git diff: ${patch.slice(0, 300)}`);
    };
    await oursDiff();
    await bareDiff();
    ours.length = 0;
    bare.length = 0;
    for (let i = 0; i < rounds; i++) {
      const [a, b] = await pair(
        i,
        () => timed(oursDiff),
        () => timed(bareDiff),
      );
      ours.push(a);
      bare.push(b);
    }
    addRow(
      report,
      log,
      '`plan diff` (A2A over stdio) vs `git diff` + `git diff --stat`',
      median(ours),
      median(bare),
      rounds,
    );

    // 4. A 100-step deterministic plan on a small repository.
    const small = join(root, 'small');
    mkdirSync(small);
    await makeRepo(small, 2, 5);
    await registerRepo(client, 'local/small', small);
    await client.call(actionRegistry.add, { definition: stepsAction('local/hundred-writes', STEPS) });
    // What a checkpoint's git work alone costs at this load: the same writes, each followed by a
    // bare `git add -A && git commit`, in a worktree of the small repository (logged, not a row).
    const smallWt = join(root, 'small-bare');
    await bareGit(small, 'worktree', 'add', '-q', '-b', 'bare-steps', smallWt, 'main');
    const bareSteps = async (round: number): Promise<number> =>
      (await timed(async () => {
        for (let s = 0; s < STEPS; s++) {
          writeFileSync(join(smallWt, `step${round}-${s}.txt`), `step ${s}\n`);
          await bareGit(smallWt, 'add', '-A');
          await bareGit(smallWt, 'commit', '-q', '-m', `step ${s}`);
        }
      })) / STEPS;
    const overheads: number[] = [];
    const walls: number[] = [];
    const tools: number[] = [];
    const bareStep: number[] = [];
    const stepRounds = cfg.quick ? 3 : 5;
    for (let i = 0; i < stepRounds; i++) {
      const id = await usePlan(client, 'local/hundred-writes', 'local/small');
      if (i % 2 === 1) bareStep.push(await bareSteps(i));
      const wall = await timed(() => executePlan(client as A2AClient, id));
      if (i % 2 === 0) bareStep.push(await bareSteps(i));
      const tree = await c.call(planTree, { planId: id });
      const all = (ds: typeof tree.decisions): typeof tree.decisions => ds.flatMap((d) => [d, ...all(d.children)]);
      const steps = all(tree.decisions).filter((d) => d.type === 'step');
      if (steps.length !== STEPS) throw new BenchError(`plan tree: ${steps.length} steps, not ${STEPS}`);
      let toolMs = 0;
      for (const d of steps) {
        const e = await c.call(planExplain, { planId: id, decisionId: d.id });
        for (const call of e.toolCalls) toolMs += call.durationMs;
      }
      walls.push(wall);
      tools.push(toolMs);
      overheads.push((wall - toolMs) / STEPS);
    }
    const perStep = median(overheads);
    log(
      `${STEPS}-step plan: execute ${median(walls).toFixed(0)} ms, tools ${median(tools).toFixed(0)} ms, overhead ${perStep.toFixed(1)} ms/step; a bare write + \`git add -A && git commit\` ${median(bareStep).toFixed(1)} ms/step, alternating`,
    );
    report.add({
      workload: 'plan',
      metric: `${STEPS}-step write-file plan, per-step overhead: (execute wall ${median(walls).toFixed(0)} ms − tools' own ${median(tools).toFixed(0)} ms, their recorded durationMs) / ${STEPS}; ${stepRounds} plans`,
      unit: 'ms',
      ours: perStep,
    });
  } catch (err) {
    throw agentLog.explain(err);
  } finally {
    await client?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function addRow(
  report: Report,
  log: (s: string) => void,
  what: string,
  ours: number,
  floor: number,
  rounds: number,
): void {
  log(`${what}: ours ${ours.toFixed(1)} ms, bare ${floor.toFixed(1)} ms (×${(ours / floor).toFixed(2)})`);
  report.add({
    workload: 'plan (10k files)',
    metric: `${what}, ${rounds} alternating rounds`,
    unit: 'ms',
    ours,
    floor,
  });
}
