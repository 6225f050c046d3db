import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointHelpers, fastCheckpoint } from '../../../../src/infrastructure/sandbox/fast-checkpoint.js';
import type { GitBatch } from '../../../../src/infrastructure/sandbox/git-batch.js';
import { git, makeRepo, rmrf, tmpDir, write } from '../fixtures/repos.js';

/** What a checkpoint made by git's own commands is: `git add -A && git commit`, as the manager runs it. */
function slowCheckpoint(wt: string, label: string, force = false): string {
  git(wt, 'add', '-A', ...(force ? ['-f'] : []), '--', '.');
  git(
    wt,
    '-c',
    'user.name=CleverAgents',
    '-c',
    'user.email=plans@cleveragents.invalid',
    'commit',
    '-q',
    '--allow-empty',
    '--no-verify',
    '-m',
    `checkpoint: ${label}`,
  );
  return git(wt, 'rev-parse', 'HEAD');
}

/** The index holds HEAD, the work tree holds the index (ignored files aside), and the objects are sound. */
function assertClean(wt: string): void {
  assert.equal(git(wt, 'status', '--porcelain', '--untracked-files=all'), '');
  assert.equal(git(wt, 'diff-index', '--cached', 'HEAD'), '');
  assert.equal(
    git(wt, 'ls-files', '-s').replace(/ 0\t/g, ' '),
    git(wt, 'ls-tree', '-r', 'HEAD')
      .split('\n')
      .map((l) => l.replace(/^(\d+) blob ([0-9a-f]+)\t/, '$1 $2 '))
      .join('\n'),
  );
  git(wt, 'fsck', '--strict', '--no-dangling');
}

describe('fastCheckpoint', () => {
  let repo: string;
  let dir: string;
  let wt: string;
  let twin: string;
  let helpers: CheckpointHelpers;

  beforeEach(() => {
    repo = makeRepo();
    dir = tmpDir('fast');
    wt = path.join(dir, 'wt');
    twin = path.join(dir, 'twin');
    git(repo, 'worktree', 'add', '-q', '-b', 'cleveragents/plan-P1', wt);
    git(repo, 'worktree', 'add', '-q', '-b', 'twin', twin);
    helpers = new CheckpointHelpers();
  });
  afterEach(() => {
    helpers.close(wt);
    rmrf(repo, dir);
  });

  /** The same changes in both work trees. */
  const both = (f: (root: string) => void): void => [wt, twin].forEach(f);
  const checkpoint = (changed: string[], label = 'step') =>
    fastCheckpoint({ root: wt, changed, label, force: false, helpers });

  it('commits exactly what git add -A && git commit would, and leaves index and work tree in step', async () => {
    both((r) => slowCheckpoint(r, 'before-execute'));
    both((r) => {
      write(r, 'a.txt', 'one\ntwo\nthree\nfour\n');
      write(r, 'deep/er/new.txt', 'new\n');
      fs.rmSync(path.join(r, 'src/b.ts'));
      write(r, 'build/out.js', 'ignored\n');
    });
    const parent = git(wt, 'rev-parse', 'HEAD');
    const oid = await checkpoint(['a.txt', 'deep/er/new.txt', 'src/b.ts', 'build/out.js'], 'after-step:1');
    assert.ok(oid, 'the fast path was taken');
    const expected = slowCheckpoint(twin, 'after-step:1');
    assert.equal(git(wt, 'rev-parse', `${oid}^{tree}`), git(twin, 'rev-parse', `${expected}^{tree}`));
    assert.equal(git(wt, 'rev-parse', 'HEAD'), oid, 'the branch moved');
    assert.equal(git(wt, 'rev-parse', `${oid}^`), parent);
    assert.equal(
      git(wt, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s'),
      'CleverAgents <plans@cleveragents.invalid>|CleverAgents <plans@cleveragents.invalid>|checkpoint: after-step:1',
    );
    assert.match(git(wt, 'reflog', '-1', '--format=%gs', 'HEAD'), /^commit: checkpoint: after-step:1$/);
    assert.match(git(wt, 'reflog', '-1', '--format=%gs', 'cleveragents/plan-P1'), /^commit: checkpoint: after-step:1$/);
    assertClean(wt);
    // The next checkpoint (git's own, or another fast one) starts from what this one left.
    both((r) => write(r, 'src/b.ts', 'export const b = 2;\n'));
    const next = await checkpoint(['src/b.ts']);
    assert.ok(next);
    const twinNext = slowCheckpoint(twin, 'step');
    assert.equal(git(wt, 'rev-parse', `${next}^{tree}`), git(twin, 'rev-parse', `${twinNext}^{tree}`));
    assertClean(wt);
    write(wt, 'c.txt', 'changed behind its back\n');
    const slow = slowCheckpoint(wt, 'git');
    assert.equal(git(wt, 'diff', '--name-only', `${next}`, slow), 'c.txt');
    assertClean(wt);
  });

  it('takes ignored files with force, as the copy sandboxes stage them', async () => {
    slowCheckpoint(wt, 'base');
    write(wt, 'build/out.js', 'kept\n');
    const oid = await fastCheckpoint({ root: wt, changed: ['build/out.js'], label: 'x', force: true, helpers });
    assert.ok(oid);
    assert.equal(git(wt, 'show', `${oid}:build/out.js`), 'kept');
  });

  it('makes an empty checkpoint when nothing changed, as --allow-empty does', async () => {
    const head = slowCheckpoint(wt, 'base');
    const oid = await checkpoint([]);
    assert.ok(oid);
    assert.notEqual(oid, head);
    assert.equal(git(wt, 'rev-parse', `${oid}^{tree}`), git(wt, 'rev-parse', `${head}^{tree}`));
    assertClean(wt);
  });

  it('leaves the checkpoint to git when the sandbox is not as it assumes, writing nothing', async () => {
    slowCheckpoint(wt, 'base');
    const head = git(wt, 'rev-parse', 'HEAD');
    const index = fs.readFileSync(path.join(repo, '.git/worktrees/wt/index'));
    const cases: Array<[string, () => void, string[]]> = [
      ['an ignore file among the paths', () => write(wt, '.gitignore', 'x\n'), ['.gitignore']],
      ['a path inside .git', () => undefined, ['.git/config']],
      ['a path with ..', () => undefined, ['../x']],
      [
        'a new executable file',
        () => fs.writeFileSync(path.join(wt, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 }),
        ['run.sh'],
      ],
      ['a directory', () => fs.mkdirSync(path.join(wt, 'newdir')), ['newdir']],
      [
        'a path through a symlinked directory',
        () => {
          fs.symlinkSync('src', path.join(wt, 'link'));
          write(wt, 'src/via.txt', 'x\n');
        },
        ['link/via.txt'],
      ],
      [
        'a file inside a nested repository',
        () => {
          git(wt, 'init', '-q', 'nested');
          write(wt, 'nested/x.txt', 'x\n');
        },
        ['nested/x.txt'],
      ],
    ];
    for (const [what, setup, changed] of cases) {
      setup();
      assert.equal(await checkpoint(changed), undefined, what);
      assert.equal(git(wt, 'rev-parse', 'HEAD'), head, `${what}: the branch stays`);
      assert.ok(fs.readFileSync(path.join(repo, '.git/worktrees/wt/index')).equals(index), `${what}: the index stays`);
      assert.equal(fs.existsSync(path.join(repo, '.git/worktrees/wt/index.lock')), false);
    }
  });

  it('leaves it to git when the index does not hold HEAD, or is locked, or HEAD is detached', async () => {
    slowCheckpoint(wt, 'base');
    write(wt, 'a.txt', 'changed\n');
    git(wt, 'rm', '-q', '--cached', 'c.txt');
    assert.equal(await checkpoint(['a.txt']), undefined, 'a staged removal the paths do not mention');
    git(wt, 'reset', '-q');
    const lock = path.join(repo, '.git/worktrees/wt/index.lock');
    fs.writeFileSync(lock, '');
    assert.equal(await checkpoint(['a.txt']), undefined, 'someone else holds the index');
    assert.equal(fs.existsSync(lock), true, 'their lock is left alone');
    fs.rmSync(lock);
    git(wt, 'checkout', '-q', '--detach');
    assert.equal(await checkpoint(['a.txt']), undefined, 'a detached HEAD');
  });

  it('leaves it to git when the index changed while git hashed the files, and keeps that change', async () => {
    slowCheckpoint(wt, 'base');
    const head = git(wt, 'rev-parse', 'HEAD');
    /** Helpers whose hashing lets someone else write the index first. */
    class Meddling extends CheckpointHelpers {
      override hash(root: string): GitBatch {
        const real = super.hash(root);
        const ask = (input: string, fields: number): Promise<string[]> => {
          git(wt, 'rm', '-q', '--cached', 'c.txt');
          return real.ask(input, fields);
        };
        return { ask } as unknown as GitBatch;
      }
    }
    const meddling = new Meddling();
    write(wt, 'a.txt', 'changed\n');
    try {
      assert.equal(
        await fastCheckpoint({ root: wt, changed: ['a.txt'], label: 'x', force: false, helpers: meddling }),
        undefined,
      );
    } finally {
      meddling.close(wt);
    }
    assert.equal(git(wt, 'rev-parse', 'HEAD'), head);
    assert.match(git(wt, 'status', '--porcelain'), /^D {2}c\.txt$/m, "the other writer's index stays");
    assert.equal(fs.existsSync(path.join(repo, '.git/worktrees/wt/index.lock')), false);
  });

  it('smudges an entry that was racily clean, so a change git had yet to look at is still seen', async () => {
    git(wt, 'config', 'core.trustctime', 'false');
    slowCheckpoint(wt, 'base');
    const gitDir = path.join(repo, '.git/worktrees/wt');
    // c.txt and the index share an mtime second: git must compare c.txt's content before trusting it.
    const t = new Date(Math.floor(Date.now() / 1000) * 1000 - 10_000);
    write(wt, 'c.txt', 'SEE\n');
    fs.utimesSync(path.join(wt, 'c.txt'), t, t);
    git(wt, 'commit', '-q', '-am', 'c');
    write(wt, 'c.txt', 'sea\n');
    fs.utimesSync(path.join(wt, 'c.txt'), t, t);
    fs.utimesSync(path.join(gitDir, 'index'), t, t);
    write(wt, 'a.txt', 'other\n');
    assert.ok(await checkpoint(['a.txt']));
    assert.equal(git(wt, 'status', '--porcelain'), 'M c.txt'.padStart(8));
  });

  it('leaves it to git right after a checkout, when most entries are racily clean', async () => {
    const t = new Date(Math.floor(Date.now() / 1000) * 1000 - 10_000);
    for (let i = 0; i < 70; i++) {
      write(wt, `many/f${i}.txt`, `${i}\n`);
      fs.utimesSync(path.join(wt, `many/f${i}.txt`), t, t);
    }
    slowCheckpoint(wt, 'base');
    fs.utimesSync(path.join(repo, '.git/worktrees/wt/index'), t, t);
    write(wt, 'a.txt', 'other\n');
    assert.equal(await checkpoint(['a.txt']), undefined);
    fs.utimesSync(path.join(repo, '.git/worktrees/wt/index'), new Date(), new Date());
    assert.ok(await checkpoint(['a.txt']), 'once the index is newer than them');
    assertClean(wt);
  });
});
