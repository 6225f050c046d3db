/**
 * End to end: `agents demo` — the README's main-job command — runs a real plan on the embedded
 * defaults through A2A over stdio, and leaves its result committed in the repository.
 */
import assert from 'node:assert/strict';
import { agentsCli } from '../support/cli.ts';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-demo-e2e');
const DATA = join(ROOT, 'data');

// TMPDIR: the sample repositories go under ROOT, removed with it.
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), env: { TMPDIR: ROOT }, timeoutMs: 60_000 });

const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trimEnd();

describe('agents demo', { concurrency: 3 }, () => {
  it('runs use → execute → diff → apply on a sample repository and shows the commit it landed in (--keep keeps it)', async () => {
    const res = await cli.run(['demo', '--keep']);
    assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
    const out = res.stdout;
    const repo = /^# 1\. A sample git repository\n(\S+) \(branch main\)$/m.exec(out)?.[1];
    assert.ok(repo, out);
    const planId = /^plan: ([0-9A-Z]{26})$/m.exec(out)?.[1];
    assert.ok(planId, out);
    // Live progress of the execute, then the diff, then the apply and the commit.
    assert.match(out, /^Step 1\/1: builtin\/replace-in-files pattern=colour replacement=color /m);
    assert.match(out, /^ {2}✓ .*checkpoint [0-9A-Z]{26}$/m);
    assert.match(out, /^-\/\/ The colour palette of the app\.$/m);
    assert.match(out, /^\+\/\/ The color palette of the app\.$/m);
    assert.match(out, /^total\t2\t\+\d+\t-\d+$/m);
    assert.match(out, /^Applied to local\/demo-[0-9a-f]{6}: commit [0-9a-f]{12} \(2 files\)$/m);
    const commit = /^commit ([0-9a-f]{40})$/m.exec(out)?.[1];
    assert.ok(commit, out);
    assert.match(out, new RegExp(`^look further: agents plan status ${planId} ; agents plan tree ${planId}`, 'm'));
    const order = ['# 3. Plan', '# 4. Execute', '# 5. The diff', '# 6. Apply', '# 7. Where it landed'].map((h) =>
      out.indexOf(h),
    );
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
      'the steps come in order',
    );
    assert.ok(order.every((i) => i >= 0));

    // The sample repository has the change committed, on its branch, and nothing else pending.
    assert.equal(git(repo, 'rev-parse', 'HEAD'), commit);
    assert.equal(git(repo, 'rev-list', '--count', 'HEAD'), '2');
    assert.equal(git(repo, 'status', '--porcelain'), '');
    const palette = readFileSync(join(repo, 'src', 'palette.ts'), 'utf8');
    assert.match(palette, /export const colors = /);
    assert.doesNotMatch(palette, /colour/);
    assert.match(readFileSync(join(repo, 'README.md'), 'utf8'), /colour/, 'outside src/**/*.ts nothing changed');
    assert.match(res.stdout, /^kept: resource and project local\/demo-[0-9a-f]{6}, the sample repository /m);
  });

  it('without --keep it cleans up; --format json gives the plan, the diff and the commit; names do not collide', async () => {
    const [a, b] = await Promise.all([cli.run(['--format', 'json', 'demo']), cli.run(['--format', 'json', 'demo'])]);
    const ea = JSON.parse(a.stdout);
    const eb = JSON.parse(b.stdout);
    for (const e of [ea, eb]) {
      assert.equal(e.exitCode, 0, JSON.stringify(e.data.error ?? e.messages));
      assert.match(e.data.planId, /^[0-9A-Z]{26}$/);
      assert.match(e.data.commit, /^[0-9a-f]{40}$/);
      assert.match(e.data.diff.unified, /^\+export const colors = /m);
      assert.equal(e.data.apply.state, 'applied');
      assert.equal(e.data.kept, false);
      assert.equal(existsSync(e.data.repo), false, 'the sample repository is removed');
    }
    assert.notEqual(ea.data.resource, eb.data.resource);
    const resources = JSON.parse(
      (await cli.run(['--format', 'json', 'resource', 'list', '--name', `^(${ea.data.resource}|${eb.data.resource})$`]))
        .stdout,
    );
    assert.equal(resources.data.totalSize, 0, 'the registrations are removed');
  });

  it('--repo uses your repository and branch, with --pattern, --replacement and --glob (required then)', async () => {
    const repo = join(ROOT, 'mine');
    mkdirSync(join(repo, 'lib'), { recursive: true });
    writeFileSync(join(repo, 'lib', 'x.js'), 'const favourite = 1;\n');
    git(repo, '-c', 'init.defaultBranch=trunk', 'init', '-q');
    git(repo, '-c', 'user.name=me', '-c', 'user.email=me@example.invalid', 'add', '-A');
    git(repo, '-c', 'user.name=me', '-c', 'user.email=me@example.invalid', 'commit', '-q', '-m', 'mine');

    const missing = await cli.run(['demo', '--repo', repo, '--pattern', 'favourite']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /with --repo, give --pattern, --replacement and --glob/);

    const res = await cli.run([
      'demo',
      '--repo',
      repo,
      '--pattern',
      'favourite',
      '--replacement',
      'favorite',
      '--glob',
      'lib/**/*.js',
    ]);
    assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout, new RegExp(`^# 1\\. Your repository\\n${repo} \\(branch trunk\\)$`, 'm'));
    assert.equal(readFileSync(join(repo, 'lib', 'x.js'), 'utf8'), 'const favorite = 1;\n');
    assert.equal(git(repo, 'rev-list', '--count', 'trunk'), '2');
    assert.ok(existsSync(repo), 'your repository is never removed');
  });
});
