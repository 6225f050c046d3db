import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import {
  ApplyJournals,
  type CopyJournal,
  type WorktreeJournal,
} from '../../../../src/infrastructure/sandbox/apply-journal.ts';
import { gitOut } from '../../../../src/infrastructure/sandbox/git.ts';
import type { SandboxInfo } from '../../../../src/application/index.ts';
import { exists, fingerprint, git, makeRepo, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';

/**
 * States a crash can leave an apply in, made by hand (the real kills are in
 * test/e2e/apply-crash.test.ts): the journal, the branch, the index and the work tree as they would be.
 */
describe('recovering an interrupted git-worktree apply', () => {
  let repo: string;
  let data: string;
  let manager: GitSandboxManager;
  let sb: SandboxInfo;
  let journals: ApplyJournals;
  let journal: WorktreeJournal;
  const message = 'plan P1: the changes';

  beforeEach(async () => {
    repo = makeRepo();
    data = tmpDir('data');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
    sb = await manager.create('P1', { name: 'local/app', type: 'git-checkout', path: repo });
    write(sb.root, 'a.txt', 'one\nTWO\nthree\n');
    write(sb.root, 'new/file.txt', 'new\n');
    fs.rmSync(path.join(sb.root, 'c.txt'));
    await manager.checkpoint(sb, 'work');
    // The commit the apply builds before its commit point (commit-tree, nothing written yet).
    const old = git(repo, 'rev-parse', 'main');
    const tree = git(repo, 'rev-parse', 'cleveragents/plan-P1^{tree}');
    const commit = await gitOut(repo, ['commit-tree', tree, '-p', old, '-m', message], { identity: true });
    journals = new ApplyJournals(fs.realpathSync(path.join(data, 'sandboxes')));
    journal = {
      version: 1,
      kind: 'worktree',
      id: 'test-1',
      repository: repo,
      gitDir: path.join(repo, '.git'),
      branch: 'refs/heads/main',
      oldTip: old,
      newCommit: commit,
      written: ['a.txt', 'new/file.txt'],
      deleted: ['c.txt'],
      createdAt: new Date().toISOString(),
    };
    journals.write(journals.fileOf(sb.root), journal);
  });
  afterEach(() => rmrf(repo, data));

  it('the branch still at the old tip: nothing happened, the journal goes', async () => {
    const before = fingerprint(repo);
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'rolled-back');
    assert.equal(fingerprint(repo), before);
    assert.deepEqual(journals.list(), []);
  });

  it("the apply's update-ref killed holding the branch's lock: the lock goes, and the plan applies again", async () => {
    const lock = path.join(repo, '.git', 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, `${journal.newCommit}\n`);
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'rolled-back', r?.detail);
    assert.equal(exists(lock), false);
    const again = await manager.apply(sb, message);
    assert.equal(again.ok, true, JSON.stringify(again));
  });

  it('a branch lock left empty long ago goes too (a git killed between making and writing it)', async () => {
    const lock = path.join(repo, '.git', 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, '');
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, past, past);
    await manager.recoverApplies();
    assert.equal(exists(lock), false);
  });

  it("another git command's branch lock stays, and applying says who holds the branch and what to do", async () => {
    const lock = path.join(repo, '.git', 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, `${journal.oldTip}\n`);
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'rolled-back', r?.detail);
    assert.equal(fs.readFileSync(lock, 'utf8'), `${journal.oldTip}\n`);
    await assert.rejects(manager.apply(sb, message), (e: Error & { reason?: string; hint?: string }) => {
      assert.equal(e.reason, 'UNAVAILABLE');
      assert.match(e.message, /main in .* is locked by another git command \(.*main\.lock\)/);
      assert.match(e.hint ?? '', /delete .*main\.lock and run the command again/);
      return true;
    });
    assert.equal(git(repo, 'rev-parse', 'main'), journal.oldTip);
  });

  it('the branch at the new commit, the work tree half written, the index lock ours: completed', async () => {
    git(repo, 'update-ref', 'refs/heads/main', journal.newCommit, journal.oldTip);
    write(repo, 'a.txt', 'one\nTWO\nthree\n');
    fs.writeFileSync(path.join(repo, '.git', 'index.lock'), `cleveragents apply ${journal.id}\n`);
    fs.writeFileSync(path.join(repo, '.git', 'cleveragents-apply.index.lock'), '');

    const [r] = await manager.recoverApplies();

    assert.equal(r?.outcome, 'completed', r?.detail);
    assert.equal(git(repo, 'rev-parse', 'main'), journal.newCommit);
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '');
    assert.equal(read(repo, 'new/file.txt'), 'new\n');
    assert.equal(exists(path.join(repo, 'c.txt')), false);
    assert.equal(exists(path.join(repo, '.git', 'index.lock')), false);
    assert.deepEqual(journals.list(), []);
    // Applying again reports the commit the interrupted apply made.
    assert.deepEqual(await manager.apply(sb, message), {
      ok: true,
      commit: journal.newCommit,
      files: ['a.txt', 'c.txt', 'new/file.txt'],
    });
  });

  it('waits for another git command to release the index lock, and then completes', async () => {
    git(repo, 'update-ref', 'refs/heads/main', journal.newCommit, journal.oldTip);
    const lock = path.join(repo, '.git', 'index.lock');
    fs.writeFileSync(lock, 'someone else\n');
    setTimeout(() => fs.rmSync(lock), 300);
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'completed', r?.detail);
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });

  it('is done before any later operation on the repository', async () => {
    git(repo, 'update-ref', 'refs/heads/main', journal.newCommit, journal.oldTip);
    const other = await manager.create('P2', { name: 'local/app', type: 'git-checkout', path: repo });
    assert.equal(other.baseCommit, journal.newCommit);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.deepEqual(journals.list(), []);
  });

  it('the branch moved elsewhere since: the work tree is left as it is', async () => {
    write(repo, 'x.txt', 'user\n');
    git(repo, 'add', 'x.txt');
    git(repo, 'commit', '-q', '-m', 'user commit');
    const before = fingerprint(repo);
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'left');
    assert.match(r?.detail ?? '', /moved to [0-9a-f]{12} since the interrupted apply/);
    assert.equal(fingerprint(repo), before);
    assert.deepEqual(journals.list(), []);
  });
});

describe('recovering an interrupted copy apply', () => {
  let dir: string;
  let data: string;
  let manager: GitSandboxManager;
  let journals: ApplyJournals;
  let journal: CopyJournal;
  let file: string;

  beforeEach(() => {
    dir = tmpDir('dir');
    write(dir, 'keep.txt', 'old\n');
    write(dir, 'gone.txt', 'old\n');
    data = tmpDir('data');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
    fs.mkdirSync(path.join(data, 'sandboxes'));
    journals = new ApplyJournals(fs.realpathSync(path.join(data, 'sandboxes')));
    const staging = path.join(dir, '.cleveragents-apply-t');
    write(staging, '0', 'new\n');
    write(staging, '1', 'added\n');
    journal = {
      version: 1,
      kind: 'copy',
      id: 't',
      repository: dir,
      staging,
      phase: 'staging',
      writes: [
        { path: 'keep.txt', staged: '0' },
        { path: 'sub/added.txt', staged: '1' },
      ],
      deleted: ['gone.txt'],
      createdAt: new Date().toISOString(),
    };
    file = journals.fileOf(path.join(data, 'sandboxes', 'P1', 'local.dir'));
  });
  afterEach(() => rmrf(dir, data));

  it('while staging: rolled back, the directory as it was', async () => {
    journals.write(file, journal);
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'rolled-back');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['gone.txt', 'keep.txt']);
    assert.equal(read(dir, 'keep.txt'), 'old\n');
  });

  it('past the commit point, half moved: completed', async () => {
    journals.write(file, { ...journal, phase: 'commit' });
    fs.renameSync(path.join(journal.staging, '0'), path.join(dir, 'keep.txt'));
    const [r] = await manager.recoverApplies();
    assert.equal(r?.outcome, 'completed');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['keep.txt', 'sub']);
    assert.equal(read(dir, 'keep.txt'), 'new\n');
    assert.equal(read(dir, 'sub/added.txt'), 'added\n');
    assert.deepEqual(journals.list(), []);
  });
});
