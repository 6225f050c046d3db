/**
 * End to end, local mode: how a followed plan phase ends when it is stopped from outside — cancelled
 * from another terminal, or Ctrl-C on the command that follows it — said as such, with the exit
 * code the README gives and the command that goes on.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { collect, type Agents, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { eventually } from '../support/harness.ts';
import { e2eRoot, localMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-plan-stop-e2e');

const described = (r: CliResult): string => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** A project `local/<name>` on a new repository, and a plan on it that runs `sleep <seconds>`. */
async function slowPlan(cli: Agents, name: string, seconds: string): Promise<string> {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, { 'a.txt': 'a\n' });
  await cli.ok(['resource', 'add', 'git-checkout', `local/${name}`, '--path', repo, '--branch', 'main']);
  await cli.ok(['project', 'create', `local/${name}`, '--resource', `local/${name}`]);
  const used = await cli.ok([
    'plan',
    'use',
    'builtin/run-command',
    `local/${name}`,
    '--arg',
    `command=sleep ${seconds}`,
  ]);
  return used.plan.planId as string;
}

const stepLine = (seconds: string): RegExp =>
  new RegExp(`^Step 1/1: builtin/run-command command=sleep ${seconds.replace('.', '\\.')}$`, 'm');

describe('a followed plan stopped from outside (local mode)', { concurrency: 2 }, () => {
  const { cli } = localMode({ root: ROOT, cli: { timeoutMs: 60_000 } });

  it('cancelled from another terminal: execute says the plan was cancelled and why, exit 9', async () => {
    const id = await slowPlan(cli, 'cancelled', '598.5');
    let ready!: () => void;
    const stepShown = new Promise<void>((r) => (ready = r));
    const exec = cli.run(['plan', 'execute', id], { onStdout: (out) => stepLine('598.5').test(out) && ready() });
    await stepShown;
    const cancel = await cli.run(['plan', 'cancel', id, '--reason', 'too slow']);
    assert.equal(cancel.code, 0, described(cancel));
    const ended = await exec;
    assert.equal(ended.code, 9, described(ended));
    assert.match(ended.stdout, /^state: cancelled$/m, described(ended));
    assert.doesNotMatch(ended.stdout, /processing/);
    assert.match(
      ended.stderr,
      new RegExp(`^error: plan ${id} was cancelled during its execute phase: too slow \\(PlanCancelled\\)$`, 'm'),
    );
    assert.match(ended.stderr, new RegExp(`^hint: see where it stopped with agents plan status ${id};`, 'm'));
  });

  it('Ctrl-C: execute says it was interrupted and how to resume, exit 130; the plan says so too', async () => {
    const id = await slowPlan(cli, 'interrupted', '597.5');
    // A terminal's foreground job: its own process group, so SIGINT reaches the local agent too.
    const child = cli.spawn(['plan', 'execute', id], { detached: true });
    child.stdin?.end();
    let ready!: () => void;
    const stepShown = new Promise<void>((r) => (ready = r));
    const result = collect(child, { timeoutMs: 60_000, onStdout: (out) => stepLine('597.5').test(out) && ready() });
    await stepShown;
    process.kill(-(child.pid as number), 'SIGINT');
    const res = await result;
    assert.equal(res.code, 130, described(res));
    assert.match(
      res.stderr,
      new RegExp(`^interrupted: plan ${id}: its execute phase stopped with the local agent$`, 'm'),
    );
    assert.match(
      res.stderr,
      new RegExp(`^hint: resume it with agents plan execute ${id} \\(it goes on from its last checkpoint\\)$`, 'm'),
    );
    assert.doesNotMatch(res.stderr, /restarted|error:/);
    const s = await eventually(
      async () => {
        const st = await cli.ok(['plan', 'status', id]);
        return st.state === 'errored' ? st : undefined;
      },
      15_000,
      'the plan settled',
    );
    assert.match(s.error.message, /^the execute phase was interrupted: /);
    assert.doesNotMatch(s.error.message, /the server restarted/);
  });
});
