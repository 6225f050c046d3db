import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { headFromFiles } from '../../../../src/infrastructure/sandbox/git.js';
import { git, makeRepo, rmrf, tmpDir, write } from '../fixtures/repos.js';

describe('headFromFiles', () => {
  let repo: string;
  let dir: string;

  beforeEach(() => {
    repo = makeRepo();
    dir = tmpDir('head');
  });
  afterEach(() => rmrf(repo, dir));

  it('reads the commit of a branch checked out in the main work tree', async () => {
    assert.equal(await headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
  });

  it('reads the commit of a branch checked out in a linked worktree, from the common directory', async () => {
    const wt = path.join(dir, 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'cleveragents/plan-P1', wt);
    write(wt, 'new.txt', 'new\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'in the worktree');
    const head = git(wt, 'rev-parse', 'HEAD');
    assert.notEqual(head, git(repo, 'rev-parse', 'HEAD'));
    assert.equal(await headFromFiles(wt), head);
  });

  it('reads a detached HEAD', async () => {
    write(repo, 'b.txt', 'b\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'second');
    git(repo, 'checkout', '-q', '--detach', 'HEAD~1');
    assert.equal(await headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
  });

  it('gives up on a packed ref and outside a repository, so the caller asks git', async () => {
    git(repo, 'pack-refs', '--all');
    assert.equal(await headFromFiles(repo), undefined);
    assert.equal(await headFromFiles(dir), undefined);
  });
});
