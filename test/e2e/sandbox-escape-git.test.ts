/**
 * Issue #35, point 5, with real bubblewrap and real git: what a confined command plants, and what a
 * registered repository's own configuration holds, never runs through the agent's own git.
 *
 * Every planted program would leave a marker in a directory outside any sandbox (where the
 * confinement could not write either); the markers must never appear. Commands run through the
 * real tool runner (builtin/run-command, confined); the sandbox manager with the same confinement.
 * Last, the reproduction through the built CLI: the plan's step fails with the recorded
 * refusal, readable with `agents plan status`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BUILTIN_TOOLS } from '../../src/domain/registry/builtins.ts';
import { GitSandboxManager } from '../../src/infrastructure/index.ts';
import { BuiltinToolRunner } from '../../src/infrastructure/tools/builtin-tool.runner.ts';
import { CommandConfinement } from '../../src/infrastructure/tools/confinement.ts';
import type { SandboxInfo, ToolCallResult } from '../../src/application/index.ts';
import { agentsCli } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-escape-git-'));
const MARKERS = join(ROOT, 'markers');
const RUN_COMMAND = BUILTIN_TOOLS.find((t) => t.name === 'builtin/run-command');
const touch = (name: string): string => `touch ${join(MARKERS, name)}`;
const markers = (): string[] => readdirSync(MARKERS).sort();

/** The repository's own settings that run programs (each leaving a marker). */
const HOSTILE: [string, string][] = [
  ['core.fsmonitor', `${touch('project-fsmonitor')}; false`],
  ['filter.evil.clean', `${touch('project-clean')}; cat`],
  ['filter.evil.smudge', `${touch('project-smudge')}; cat`],
  ['filter.evil.process', touch('project-process')],
  ['filter.evil.required', 'true'],
  ['diff.evil.command', touch('project-diff')],
  ['diff.evil.textconv', `${touch('project-textconv')}; cat`],
  ['merge.evil.driver', `${touch('project-merge')}; true`],
  ['core.pager', `${touch('project-pager')}; cat`],
  ['commit.gpgSign', 'true'],
  ['gpg.program', touch('project-gpg')],
];

/** What the test's own git (as the user) sets, so that only ours is under test. */
const SAFE = [
  'core.fsmonitor=false',
  'filter.evil.process=',
  'filter.evil.clean=',
  'filter.evil.required=false',
  'core.hooksPath=/dev/null',
  'commit.gpgSign=false',
];

describe('the agent’s own git and what a repository or a command configured', () => {
  let confinement: CommandConfinement;
  let tools: BuiltinToolRunner;
  let manager: GitSandboxManager;

  before(async () => {
    mkdirSync(MARKERS);
    confinement = await CommandConfinement.probe({ mode: 'bubblewrap', home: join(ROOT, 'home'), secrets: [] });
    assert.equal(confinement.mode, 'bubblewrap', confinement.describe());
    tools = new BuiltinToolRunner({ confinement });
    manager = new GitSandboxManager({ root: join(ROOT, 'data', 'sandboxes'), confinement });
  });
  after(() => {
    manager.close();
    rmSync(ROOT, { recursive: true, force: true });
  });

  /** Runs `script` with sh in the sandbox, confined, as a plan's command runs. */
  async function command(sandbox: SandboxInfo, script: string): Promise<ToolCallResult> {
    assert.ok(RUN_COMMAND);
    return tools.run({
      tool: RUN_COMMAND,
      args: { program: 'sh', args: ['-c', script] },
      sandbox,
      signal: new AbortController().signal,
      timeoutMs: 30_000,
    });
  }

  it('a command plants a repository with core.fsmonitor and a filter, tries the project’s config: refused, nothing runs', async () => {
    const repo = join(ROOT, 'plain');
    const git = initRepo(repo, { 'a.txt': 'one\ntwo\nthree\n' });
    const sb = await manager.create('P1', { name: 'local/plain', type: 'git-checkout', path: repo });
    const planted = await command(
      sb,
      [
        'git init -q sub',
        `git -C sub config core.fsmonitor '${touch('nested-fsmonitor')}; false'`,
        `git -C sub config filter.x.clean '${touch('nested-clean')}; cat'`,
        "echo '* filter=x' > sub/.gitattributes",
        'echo inner > sub/inner.txt',
        // The project's own config is read-only to a command; whatever this manages is checked below.
        `git config core.fsmonitor '${touch('project-fsmonitor')}; false' 2>/dev/null; echo project-config=$?`,
        'echo changed > a.txt',
      ].join(' && '),
    );
    assert.equal(planted.ok, true, planted.summary + planted.output);
    assert.match(planted.output, /project-config=[1-9]/, 'a command cannot write the project repository’s config');
    await assert.rejects(manager.checkpoint(sb, 'after-step:1'), (e: Error & { hint?: string }) => {
      assert.match(
        e.message,
        /holds a git repository of its own: sub\/; CleverAgents does not read a repository made inside a sandbox/,
      );
      assert.match(e.hint ?? '', /^remove sub\/\.git .*files are then checkpointed as content$/);
      return true;
    });
    await assert.rejects(manager.diff(sb), /sub\//);
    await assert.rejects(manager.apply(sb, 'apply'), /sub\//);
    assert.deepEqual(markers(), []);

    // Done as the refusal says: the files are content.
    assert.equal((await command(sb, 'rm -rf sub/.git')).ok, true);
    const cp = await manager.checkpoint(sb, 'after-step:2');
    assert.equal(git('show', `${cp}:sub/inner.txt`), 'inner');
    const d = await manager.diff(sb);
    assert.deepEqual(d.files.map((f) => f.path).sort(), ['a.txt', 'sub/.gitattributes', 'sub/inner.txt']);
    const out = await manager.apply(sb, 'plan P1');
    assert.equal(out.ok, true, JSON.stringify(out));
    assert.equal(readFileSync(join(repo, 'sub/inner.txt'), 'utf8'), 'inner\n');
    assert.deepEqual(markers(), []);
  });

  it('a registered repository whose config runs programs, and a command assigning its drivers: create, checkpoint, diff, rebase, apply run none', async () => {
    const repo = join(ROOT, 'hostile');
    const git = initRepo(repo, { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' });
    for (const [k, v] of HOSTILE) git('config', k, v);
    const sb = await manager.create('P2', { name: 'local/hostile', type: 'git-checkout', path: repo });
    // The command sends every file through the repository's drivers.
    const planted = await command(
      sb,
      "printf '* filter=evil diff=evil merge=evil\\n' > .gitattributes && printf 'one\\nPLAN\\nthree\\n' > a.txt",
    );
    assert.equal(planted.ok, true, planted.summary + planted.output);
    await manager.checkpoint(sb, 'after-step:1');
    const diff = await manager.diff(sb);
    assert.match(diff.unified, /^\+PLAN$/m);
    assert.equal(git('show', 'cleveragents/plan-P2:a.txt'), 'one\nPLAN\nthree', 'stored as written: no filter ran');

    // The user changes the same line (with the same attributes): the rebase is a conflict, not "ours".
    assert.deepEqual(markers(), []);
    // The user's own git, with the repository's programs off for this test's sake.
    const user = (...args: string[]): string => git(...SAFE.flatMap((c) => ['-c', c]), ...args);
    writeFileSync(join(repo, '.gitattributes'), '* filter=evil diff=evil merge=evil\n');
    writeFileSync(join(repo, 'a.txt'), 'one\nUSER\nthree\n');
    user('add', '-A');
    user('commit', '-q', '-m', 'user');
    assert.deepEqual(markers(), []);
    const rebased = await manager.rebase(sb);
    assert.equal(rebased.ok, false);
    assert.deepEqual(!rebased.ok && rebased.files, ['a.txt']);
    assert.match(readFileSync(join(sb.root, 'a.txt'), 'utf8'), /^<{7} /m);

    // Resolved by a command, then applied.
    assert.equal((await command(sb, "printf 'one\\nBOTH\\nthree\\n' > a.txt")).ok, true);
    await manager.checkpoint(sb, 'resolved');
    const out = await manager.apply(sb, 'plan P2');
    assert.equal(out.ok, true, JSON.stringify(out));
    assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'one\nBOTH\nthree\n');
    assert.deepEqual(markers(), []);
    await manager.remove(sb);
    assert.deepEqual(markers(), []);
  });

  it('a registered repository whose core.worktree points elsewhere is refused, and nothing there is touched', async () => {
    const repo = join(ROOT, 'redirected');
    const other = join(ROOT, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'a.txt'), 'not yours\n');
    const git = initRepo(repo, { 'a.txt': 'mine\n' });
    for (const [k, v] of HOSTILE) git('config', k, v);
    git('config', 'core.worktree', other);
    await assert.rejects(
      manager.create('P3', { name: 'local/redirected', type: 'git-checkout', path: repo }),
      /the repository at .*redirected sets core\.worktree to .*other; CleverAgents works only in the directory a resource names/,
    );
    assert.equal(readFileSync(join(other, 'a.txt'), 'utf8'), 'not yours\n');
    assert.deepEqual(readdirSync(other), ['a.txt']);
    assert.deepEqual(markers(), []);
  });
});

describe('the issue’s reproduction through the CLI', () => {
  const dir = join(ROOT, 'cli');

  it('a step that plants core.fsmonitor in a new repository fails with the recorded refusal; nothing ran', async () => {
    mkdirSync(MARKERS, { recursive: true });
    const marker = join(ROOT, 'cli-marker');
    const repo = join(dir, 'repo');
    initRepo(repo, { 'README.md': '# hi\n' });
    const agents = agentsCli({ dataDir: join(dir, 'data'), configHome: join(dir, 'no-config'), timeoutMs: 60_000 });
    assert.equal(
      (await agents.run(['resource', 'add', 'git-checkout', 'local/app', '--path', repo, '--branch', 'main'])).code,
      0,
    );
    const project = join(dir, 'project.json');
    writeFileSync(project, JSON.stringify({ name: 'local/app', resources: ['local/app'] }));
    assert.equal((await agents.run(['project', 'add', '--config', project])).code, 0);
    const command = `sh -c "git init -q sub && git -C sub config core.fsmonitor 'touch ${marker}; false' && echo x > sub/f.txt"`;
    const used = await agents.run([
      '--format',
      'json',
      'plan',
      'use',
      'builtin/run-command',
      'local/app',
      '--arg',
      `command=${command}`,
    ]);
    const id = String((JSON.parse(used.stdout) as { data: { plan: { planId: string } } }).data.plan.planId);
    const executed = await agents.run(['plan', 'execute', id]);
    assert.notEqual(executed.code, 0, executed.stdout);
    const status = JSON.parse((await agents.run(['--format', 'json', 'plan', 'status', id])).stdout) as {
      data: { state: string; error: { kind: string; message: string; hint: string; files: string[] } };
    };
    assert.equal(status.data.state, 'errored');
    assert.equal(status.data.error.kind, 'policy');
    assert.match(status.data.error.message, /holds a git repository of its own: sub\//);
    assert.match(status.data.error.hint, /remove sub\/\.git/);
    assert.deepEqual(status.data.error.files, ['sub/']);
    assert.equal(existsSync(marker), false);
  });
});
