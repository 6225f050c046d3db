import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { GitError, gitChain, headFromFiles } from '../../../../src/infrastructure/sandbox/git.ts';
import { git, makeRepo, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('headFromFiles', () => {
  let repo: string;
  let dir: string;

  beforeEach(() => {
    repo = makeRepo();
    dir = tmpDir('head');
  });
  afterEach(() => rmrf(repo, dir));

  it('reads the commit of a branch checked out in the main work tree', () => {
    assert.equal(headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
  });

  it('reads the commit of a branch checked out in a linked worktree, from the common directory', () => {
    const wt = path.join(dir, 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'cleveragents/plan-P1', wt);
    write(wt, 'new.txt', 'new\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'in the worktree');
    const head = git(wt, 'rev-parse', 'HEAD');
    assert.notEqual(head, git(repo, 'rev-parse', 'HEAD'));
    assert.equal(headFromFiles(wt), head);
  });

  it('reads a detached HEAD', () => {
    write(repo, 'b.txt', 'b\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'second');
    git(repo, 'checkout', '-q', '--detach', 'HEAD~1');
    assert.equal(headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
  });

  it('gives up on a packed ref and outside a repository, so the caller asks git', () => {
    git(repo, 'pack-refs', '--all');
    assert.equal(headFromFiles(repo), undefined);
    assert.equal(headFromFiles(dir), undefined);
  });
});

describe('gitChain', () => {
  let repo: string;
  let dir: string;

  beforeEach(() => {
    repo = makeRepo();
    dir = tmpDir('chain');
  });
  afterEach(() => rmrf(repo, dir));

  it('runs the commands in order from one process: what add staged, commit commits', async () => {
    write(repo, 'new.txt', 'new\n');
    const before = git(repo, 'rev-parse', 'HEAD');
    const r = await gitChain(
      repo,
      [
        ['add', '-A'],
        ['commit', '-q', '-m', 'both'],
      ],
      { identity: true },
    );
    assert.equal(r.code, 0);
    assert.equal(git(repo, 'rev-parse', 'HEAD~1'), before);
    assert.equal(git(repo, 'show', '-s', '--format=%s|%an', 'HEAD'), 'both|CleverAgents');
    assert.match(git(repo, 'show', '--name-only', '--format=', 'HEAD'), /^new\.txt$/m);
  });

  it('passes every argument as it is: nothing in one reaches the shell', async () => {
    const pwned = path.join(dir, 'pwned');
    const message = `a "quoted" $HOME \`touch ${pwned}\` $(touch ${pwned}); touch ${pwned} 'single' \\\nsecond line`;
    write(repo, 'odd name $(x).txt', 'x\n');
    await gitChain(
      repo,
      [
        ['add', '--', 'odd name $(x).txt'],
        ['commit', '-q', '--cleanup=verbatim', '-m', message],
      ],
      {
        identity: true,
      },
    );
    assert.equal(existsSync(pwned), false);
    assert.equal(git(repo, 'show', '-s', '--format=%B', 'HEAD').replace(/\n+$/, ''), message);
    assert.match(git(repo, 'show', '--name-only', '--format=', 'HEAD'), /^odd name \$\(x\)\.txt$/m);
  });

  it('stops at the first command that fails, with its exit code and its stderr', async () => {
    const before = git(repo, 'rev-parse', 'HEAD');
    write(repo, 'a.txt', 'changed\n');
    await assert.rejects(
      gitChain(
        repo,
        [
          ['add', '--', 'missing.txt'],
          ['commit', '-q', '-m', 'never'],
        ],
        { identity: true },
      ),
      (err: unknown) =>
        err instanceof GitError &&
        err.code === 128 &&
        /missing\.txt/.test(err.stderr) &&
        err.message.startsWith('git add -- missing.txt && git commit -q -m never failed (128)'),
    );
    assert.equal(git(repo, 'rev-parse', 'HEAD'), before);
    // An exit code the caller accepts is an answer, as for one command.
    const r = await gitChain(
      repo,
      [
        ['status', '-s'],
        ['diff', '--quiet', 'HEAD'],
      ],
      { okCodes: [1] },
    );
    assert.equal(r.code, 1);
  });
});
