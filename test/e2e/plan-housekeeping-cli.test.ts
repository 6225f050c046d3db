/**
 * End to end through the built CLI (local mode: an agent over stdio per call) on temporary git
 * repositories: a plan whose base branch moved — conflict at apply → `plan rebase` → resolve by
 * hand → `plan rebase --continue` → apply; a clean moved base → rebase → apply; and clean-up —
 * `plan delete`, `plan cancel --clean`, `plan prune` — leaving no stray worktree or branch, never
 * deleting unapplied work without --force.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentsCli, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-plan-house-e2e');
const DATA = join(ROOT, 'data');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), timeoutMs: 60_000 });

function expectCode(res: CliResult, code: number, what: string): void {
  assert.equal(res.code, code, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trimEnd();

/** A repository on main, registered as resource and project `local/<name>`. */
async function project(name: string): Promise<string> {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, {
    'src/a.ts': 'const colour = 1;\nexport { colour };\n',
    'README.md': '# colour\n',
  });
  expectCode(
    await cli.run(['resource', 'add', 'git-checkout', name, '--path', repo, '--branch', 'main']),
    0,
    'resource add',
  );
  expectCode(await cli.run(['project', 'create', name, '--resource', name]), 0, 'project create');
  return repo;
}

/** A deterministic plan (builtin/replace colour → color), executed: its sandbox holds the change. */
async function executed(name: string): Promise<string> {
  const used = await cli.ok([
    'plan',
    'use',
    'builtin/replace',
    name,
    '--arg',
    'pattern=colour',
    '--arg',
    'replacement=color',
    '--arg',
    'glob=src/**/*.ts',
  ]);
  const id = used.plan.planId as string;
  expectCode(await cli.run(['plan', 'execute', id]), 0, 'plan execute');
  return id;
}

const userCommit = (repo: string, file: string, content: string): void => {
  writeFileSync(join(repo, file), content);
  git(repo, 'commit', '-q', '-am', `user: ${file}`);
};
const planEntries = (repo: string): string =>
  `${git(repo, 'worktree', 'list', '--porcelain')}\n${git(repo, 'branch', '--list', 'cleveragents/*')}`;

describe('plan housekeeping through the CLI', { concurrency: 2 }, () => {
  it('moved base with a conflict: apply names plan rebase → rebase lists the files → fix by hand → --continue → apply', async () => {
    const repo = await project('moved');
    const id = await executed('moved');
    userCommit(repo, 'src/a.ts', 'const colour = 42;\nexport { colour };\n');

    const apply = await cli.run(['plan', 'apply', id, '--yes']);
    expectCode(apply, 10, 'apply onto the moved branch');
    assert.match(apply.stderr, /^file: src\/a\.ts$/m);
    assert.match(apply.stderr, new RegExp(`^hint: .*agents plan rebase ${id}`, 'm'));

    const rebase = await cli.run(['plan', 'rebase', id]);
    expectCode(rebase, 10, 'rebase with a conflict');
    assert.match(rebase.stderr, /^error: Plan [0-9A-Z]{26} was rebased with conflicts: .* \(PlanError\)$/m);
    assert.match(rebase.stderr, /^file: src\/a\.ts$/m);
    assert.match(rebase.stderr, new RegExp(`^hint: .*agents plan rebase ${id} --continue`, 'm'));
    assert.match(rebase.stderr, new RegExp(`agents plan prompt ${id}`));
    const s = await cli.ok(['plan', 'status', id]);
    assert.equal(`${s.phase}/${s.state}`, 'execute/errored');
    assert.deepEqual(s.error.files, ['src/a.ts']);
    const root: string = s.sandboxes[0].root;
    assert.ok(rebase.stderr.includes(root), 'the hint names the sandbox');
    const marked = readFileSync(join(root, 'src', 'a.ts'), 'utf8');
    assert.match(marked, /^<<<<<<< main\nconst colour = 42;\nexport \{ colour \};\n=======\nconst color = 1;\n/m);
    assert.match(marked, /^>>>>>>> plan cleveragents\/plan-/m);
    const plain = await cli.run(['--format', 'plain', 'plan', 'status', id]);
    assert.match(plain.stdout, /^error file: src\/a\.ts$/m);
    assert.match(plain.stdout, new RegExp(`^error hint: .*agents plan rebase ${id} --continue`, 'm'));

    const early = await cli.run(['plan', 'rebase', id, '--continue']);
    expectCode(early, 10, '--continue with markers left');
    assert.match(early.stderr, /conflict markers remain in src\/a\.ts/);

    writeFileSync(join(root, 'src', 'a.ts'), 'const color = 42;\nexport { color };\n');
    const cont = await cli.run(['plan', 'rebase', id, '--continue']);
    expectCode(cont, 0, '--continue');
    assert.match(cont.stdout, /^outcome: resolved$/m);
    assert.match(cont.stdout, /^state: complete$/m);

    const applied = await cli.run(['plan', 'apply', id, '--yes']);
    expectCode(applied, 0, 'apply after the rebase');
    assert.equal(readFileSync(join(repo, 'src', 'a.ts'), 'utf8'), 'const color = 42;\nexport { color };\n');
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.equal(git(repo, 'log', '-1', '--format=%s'), 'Replace /colour/ with "color" in src/**/*.ts');
    assert.doesNotMatch(planEntries(repo), new RegExp(id));
  });

  it('a clean moved base: rebase keeps the plan appliable, apply lands on the new head', async () => {
    const repo = await project('clean');
    const id = await executed('clean');
    userCommit(repo, 'README.md', '# colour, documented\n');
    const head = git(repo, 'rev-parse', 'HEAD');

    const r = await cli.run(['plan', 'rebase', id]);
    expectCode(r, 0, 'rebase');
    assert.match(r.stdout, /^outcome: rebased$/m);
    assert.match(r.stdout, new RegExp(`^local/clean: rebased onto main ${head.slice(0, 12)} `, 'm'));
    assert.match(r.stdout, new RegExp(`^next: agents plan diff ${id} ; agents plan apply ${id}$`, 'm'));
    const again = await cli.ok(['plan', 'rebase', id]);
    assert.equal(again.outcome, 'up-to-date');

    expectCode(await cli.run(['plan', 'apply', id, '--yes']), 0, 'apply');
    assert.equal(git(repo, 'rev-parse', 'HEAD~1'), head);
    assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# colour, documented\n');
    assert.equal(readFileSync(join(repo, 'src', 'a.ts'), 'utf8'), 'const color = 1;\nexport { color };\n');
  });

  it('delete refuses unapplied work without --force; cancel --clean and prune leave no worktree or branch', async () => {
    const repo = await project('tidy');
    const [unapplied, toCancel, toApply] = [await executed('tidy'), await executed('tidy'), await executed('tidy')];
    assert.match(planEntries(repo), new RegExp(unapplied));

    const refused = await cli.run(['plan', 'delete', unapplied]);
    expectCode(refused, 5, 'delete of unapplied work');
    assert.match(refused.stderr, /never applied: 1 file \(\+2 -2\) in local\/tidy \(src\/a\.ts\)/);
    assert.match(refused.stderr, /^hint: .*--force/m);
    assert.match(planEntries(repo), new RegExp(unapplied), 'nothing was removed');
    const deleted = await cli.run(['plan', 'delete', unapplied, '--force']);
    expectCode(deleted, 0, 'delete --force');
    assert.match(deleted.stdout, /^discarded: 1 file \(\+2 -2\) never applied$/m);
    assert.doesNotMatch(planEntries(repo), new RegExp(unapplied));
    expectCode(await cli.run(['plan', 'status', unapplied]), 3, 'status of a deleted plan');

    const cancelled = await cli.ok(['plan', 'cancel', toCancel, '--clean']);
    assert.equal(cancelled.state, 'cancelled');
    assert.deepEqual(cancelled.sandboxes, []);
    assert.doesNotMatch(planEntries(repo), new RegExp(toCancel));
    expectCode(await cli.run(['plan', 'apply', toApply, '--yes']), 0, 'apply');

    const usage = await cli.run(['plan', 'prune', '--older-than', '7x']);
    expectCode(usage, 2, 'a bad duration');
    assert.match(usage.stderr, /30m, 12h, 7d/);
    const fresh = await cli.ok(['plan', 'prune']);
    assert.equal(fresh.olderThanSeconds, 7 * 86_400);
    assert.ok(!fresh.removed.some((p: { planId: string }) => [toCancel, toApply].includes(p.planId)));

    const dry = await cli.run(['plan', 'prune', '--older-than', '0', '--state', 'applied,cancelled', '--dry-run']);
    expectCode(dry, 0, 'prune --dry-run');
    assert.match(dry.stdout, new RegExp(`^${toCancel}\twould delete\t`, 'm'));
    assert.match(dry.stdout, new RegExp(`^${toApply}\twould delete\tapply/applied\t`, 'm'));
    expectCode(await cli.run(['plan', 'status', toCancel]), 0, 'a dry run removes nothing');

    const pruned = await cli.ok(['plan', 'prune', '--older-than', '0', '--state', 'applied,cancelled']);
    const ids = pruned.removed.map((p: { planId: string }) => p.planId);
    assert.ok(ids.includes(toCancel) && ids.includes(toApply), JSON.stringify(pruned));
    for (const id of [toCancel, toApply])
      expectCode(await cli.run(['plan', 'status', id]), 3, `status of pruned ${id}`);
    assert.equal(git(repo, 'branch', '--list', 'cleveragents/*'), '');
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'only the repository');
    assert.equal(existsSync(join(DATA, 'sandboxes', toCancel)), false);
  });
});
