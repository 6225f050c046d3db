/**
 * End to end, local mode: answers at the ends of a plan — an apply with nothing left to apply (its
 * only step rejected), and guidance given with `plan prompt` to a plan waiting for its apply.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Agents, CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot, localMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-plan-nothing-e2e');

const said = (r: CliResult): string => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** A project `local/<name>` on a new repository whose file says colour; returns its git. */
async function project(cli: Agents, name: string): Promise<(...args: string[]) => string> {
  const repo = join(ROOT, 'repos', name);
  const git = initRepo(repo, { 'a.txt': 'colour\n' });
  await cli.ok(['resource', 'add', 'git-checkout', `local/${name}`, '--path', repo, '--branch', 'main']);
  await cli.ok(['project', 'create', `local/${name}`, '--resource', `local/${name}`]);
  return git;
}

const REPLACE = ['--arg', 'pattern=colour', '--arg', 'replacement=color'];

describe('the ends of a plan (local mode)', { concurrency: 2 }, () => {
  const { cli } = localMode({ root: ROOT, cli: { timeoutMs: 60_000 } });

  it('its only step rejected, apply says there is nothing to apply and makes no commit', async () => {
    const git = await project(cli, 'rejected');
    const head = git('rev-parse', 'HEAD');
    const id = (
      await cli.ok(['plan', 'use', 'builtin/replace', 'local/rejected', ...REPLACE, '--automation-profile', 'manual'])
    ).plan.planId as string;
    const exec = await cli.run(['plan', 'execute', id]);
    assert.equal(exec.code, 5, said(exec));
    const rejected = await cli.run(['plan', 'reject', id]);
    assert.equal(rejected.code, 0, said(rejected));
    assert.match(rejected.stdout, /^Step 1\/1 skipped: rejected$/m);
    const applied = await cli.run(['plan', 'apply', id]);
    assert.equal(applied.code, 0, said(applied));
    assert.match(
      applied.stdout,
      new RegExp(
        `^Nothing to apply: plan ${id} changed no files, so no commit was made; the plan is closed and its sandbox removed$`,
        'm',
      ),
    );
    assert.doesNotMatch(applied.stdout, /Applied to|0 files/);
    assert.equal(git('rev-parse', 'HEAD'), head, 'no commit');
    const s = await cli.ok(['plan', 'status', id]);
    assert.equal(`${s.phase}/${s.state}`, 'apply/applied');
    assert.deepEqual(s.applied.commits, []);
    assert.deepEqual(s.sandboxes, []);
  });

  it('plan prompt on a plan waiting for its apply declines it as plan reject does (exit 0, ready to apply)', async () => {
    const git = await project(cli, 'prompted');
    const id = (await cli.ok(['plan', 'use', 'builtin/replace', 'local/prompted', ...REPLACE])).plan.planId as string;
    await cli.ok(['plan', 'execute', id]);
    const asked = await cli.run(['plan', 'apply', id]);
    assert.equal(asked.code, 5, said(asked));
    const prompted = await cli.run(['plan', 'prompt', id, 'not', 'now']);
    assert.equal(prompted.code, 0, said(prompted));
    assert.match(prompted.stdout, /^Apply declined \(not now\); the plan stays ready to apply$/m);
    assert.match(prompted.stdout, new RegExp(`^next: agents plan diff ${id} ; agents plan apply ${id}$`, 'm'));
    assert.doesNotMatch(prompted.stderr, /error:/);
    const s = await cli.ok(['plan', 'status', id]);
    assert.equal(`${s.phase}/${s.state}`, 'execute/complete');
    assert.equal(git('show', 'HEAD:a.txt'), 'colour');
  });
});
