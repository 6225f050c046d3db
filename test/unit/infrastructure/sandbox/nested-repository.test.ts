import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import { NestedRepositoryError } from '../../../../src/infrastructure/sandbox/git-stage.ts';
import type { ResourceDefinition } from '../../../../src/domain/registry/resource.definition.ts';
import { git, makeRepo, rmrf, tmpDir, write } from '../fixtures/repos.ts';

/** A repository at `dir` whose fsmonitor would leave `marker` if any git of ours read it. */
function plantRepository(dir: string, marker: string): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  write(dir, 'inner.txt', 'inner\n');
  git(dir, 'config', 'core.fsmonitor', `touch '${marker}'; false`);
  git(dir, 'config', 'filter.x.clean', `touch '${marker}'; cat`);
  write(dir, '.gitattributes', '* filter=x\n');
}

describe('a repository made inside a sandbox', () => {
  let repo: string;
  let data: string;
  let marker: string;
  let manager: GitSandboxManager;
  const resource = (): ResourceDefinition => ({ name: 'local/app', type: 'git-checkout', path: repo });

  beforeEach(() => {
    repo = makeRepo();
    data = tmpDir('data');
    marker = path.join(data, 'MARKER');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
  });
  afterEach(() => rmrf(repo, data));

  it('is refused by a checkpoint with the paths and what to do, and nothing is committed or run', async () => {
    const sb = await manager.create('P1', resource());
    write(sb.root, 'kept.txt', 'work\n');
    plantRepository(path.join(sb.root, 'sub'), marker);
    plantRepository(path.join(sb.root, 'deep/er/repo'), marker);
    const head = git(sb.root, 'rev-parse', 'HEAD');
    await assert.rejects(manager.checkpoint(sb, 'after-step:1'), (e: unknown) => {
      assert.ok(e instanceof NestedRepositoryError);
      assert.equal(e.reason, 'PLAN_ERROR');
      assert.match(e.message, /holds git repositories of its own: deep\/er\/repo\/, sub\/; .*nothing was checkpointed/);
      assert.match(
        e.hint ?? '',
        /^remove deep\/er\/repo\/\.git, sub\/\.git \(in the command that made them.*checkpointed as content$/,
      );
      assert.deepEqual(e.details['files'], ['deep/er/repo/', 'sub/']);
      assert.equal(e.details['kind'], 'policy');
      return true;
    });
    // The paths a step wrote lead there too when one of them is inside the repository.
    await assert.rejects(manager.checkpoint(sb, 'after-step:1', ['sub/inner.txt']), NestedRepositoryError);
    await assert.rejects(manager.diff(sb), NestedRepositoryError);
    assert.equal(git(sb.root, 'rev-parse', 'HEAD'), head);
    assert.equal(fs.existsSync(marker), false);

    // Once their .git is gone, their files are content like any other.
    fs.rmSync(path.join(sb.root, 'sub/.git'), { recursive: true });
    fs.rmSync(path.join(sb.root, 'deep/er/repo/.git'), { recursive: true });
    const cp = await manager.checkpoint(sb, 'after-step:2');
    assert.equal(git(sb.root, 'show', `${cp}:sub/inner.txt`), 'inner');
    assert.equal(
      git(sb.root, 'ls-tree', '-r', '--format=%(objectmode) %(path)', cp, 'sub'),
      ['100644 sub/.gitattributes', '100644 sub/inner.txt'].join('\n'),
    );
    assert.equal(fs.existsSync(marker), false);
  });

  it('in a submodule path is refused, and one left ignored is left alone', async () => {
    // The user's repository has a submodule (a gitlink) and ignores vendor/.
    const sub = tmpDir('sub');
    git(sub, 'init', '-q', '-b', 'main');
    write(sub, 's.txt', 's\n');
    git(sub, 'add', '-A');
    git(sub, 'commit', '-q', '-m', 's');
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'mod');
    write(repo, '.gitignore', 'build/\nvendor/\n');
    git(repo, 'commit', '-q', '-am', 'submodule');
    try {
      const sb = await manager.create('P2', resource());
      plantRepository(path.join(sb.root, 'vendor/lib'), marker);
      write(sb.root, 'a.txt', 'changed\n');
      const cp = await manager.checkpoint(sb, 'with an ignored repository');
      assert.equal(git(sb.root, 'show', `${cp}:a.txt`), 'changed');
      assert.equal(git(sb.root, 'ls-tree', cp, 'vendor'), '');

      fs.rmSync(path.join(sb.root, 'mod'), { recursive: true, force: true });
      plantRepository(path.join(sb.root, 'mod'), marker);
      await assert.rejects(manager.checkpoint(sb, 'planted'), /holds a git repository of its own: mod\/;/);
      await assert.rejects(manager.diff(sb), NestedRepositoryError);
      assert.equal(fs.existsSync(marker), false);
    } finally {
      rmrf(sub);
    }
  });

  it('in a copy sandbox is refused even where an ignore rule would hide it', async () => {
    const dir = tmpDir('dir');
    write(dir, 'notes.txt', 'n\n');
    write(dir, '.gitignore', 'cache/\n');
    try {
      const sb = await manager.create('P3', { name: 'local/dir', type: 'fs-directory', path: dir });
      plantRepository(path.join(sb.root, 'cache/r'), marker);
      await assert.rejects(manager.checkpoint(sb, 'x'), /holds a git repository of its own: cache\/r\/;/);
      await assert.rejects(manager.apply(sb, 'apply'), NestedRepositoryError);
      assert.equal(fs.existsSync(path.join(dir, 'cache')), false);
      assert.equal(fs.existsSync(marker), false);
    } finally {
      rmrf(dir);
    }
  });
});

describe('a checkpoint with git plumbing', () => {
  let repo: string;
  let data: string;
  let manager: GitSandboxManager;

  beforeEach(() => {
    repo = makeRepo();
    data = tmpDir('data');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
  });
  afterEach(() => rmrf(repo, data));

  it('commits what git add -A would, of a twin worktree with the same changes, known paths or not', async () => {
    const sb = await manager.create('P1', { name: 'local/app', type: 'git-checkout', path: repo });
    const twin = path.join(data, 'twin');
    git(repo, 'worktree', 'add', '-q', '-b', 'twin', twin, 'main');
    const change = (root: string, step: number): string[] => {
      if (step === 0) {
        write(root, 'a.txt', 'changed\n');
        write(root, 'new/deep/file.txt', 'new\n');
        write(root, 'build/ignored.js', 'ignored\n');
        fs.rmSync(path.join(root, 'c.txt'));
        return ['a.txt', 'new/deep/file.txt', 'build/ignored.js', 'c.txt', 'never-existed.txt'];
      }
      // A file replaced by a directory, an executable, a symlink.
      fs.rmSync(path.join(root, 'src/b.ts'));
      write(root, 'src/b.ts/inner.ts', 'inner\n');
      write(root, 'run.sh', '#!/bin/sh\n');
      fs.chmodSync(path.join(root, 'run.sh'), 0o755);
      fs.symlinkSync('a.txt', path.join(root, 'link'));
      return ['src/b.ts', 'src/b.ts/inner.ts', 'run.sh', 'link'];
    };
    for (const step of [0, 1]) {
      const known = change(sb.root, step);
      change(twin, step);
      const cp = await manager.checkpoint(sb, `after-step:${step + 1}`, known);
      git(twin, 'add', '-A');
      git(twin, 'commit', '-q', '-m', 'twin');
      assert.equal(git(sb.root, 'rev-parse', `${cp}^{tree}`), git(twin, 'rev-parse', 'HEAD^{tree}'), `step ${step}`);
      assert.equal(git(sb.root, 'rev-parse', 'HEAD'), cp);
      assert.equal(git(sb.root, 'status', '--porcelain'), '');
      assert.equal(
        git(sb.root, 'log', '-1', '--format=%an <%ae>|%s'),
        `CleverAgents <plans@cleveragents.invalid>|checkpoint: after-step:${step + 1}`,
      );
      assert.match(git(sb.root, 'reflog', '-1', '--format=%gs', 'cleveragents/plan-P1'), /checkpoint: after-step/);
    }
    git(sb.root, 'fsck', '--strict', '--no-progress');
  });
});
