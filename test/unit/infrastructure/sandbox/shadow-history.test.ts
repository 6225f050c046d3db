import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ShadowHistory } from '../../../../src/infrastructure/sandbox/shadow-history.ts';
import { hostileRepo, plainGit } from '../fixtures/hostile.ts';
import { git, makeRepo, rmrf, tmpDir, write } from '../fixtures/repos.ts';

/** Every byte of a directory tree (names, modes, contents, link targets): `.git` included. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(dir, r));
      h.update(`${r}\0${st.mode}\0`);
      if (st.isSymbolicLink()) h.update(fs.readlinkSync(path.join(dir, r)));
      else if (st.isDirectory()) walk(r);
      else h.update(fs.readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  return h.digest('hex');
}

const read = (dir: string, rel: string): Buffer => fs.readFileSync(path.join(dir, rel));

describe('ShadowHistory', () => {
  let base: string;
  let history: ShadowHistory;
  const cleanup: string[] = [];
  beforeEach(() => {
    base = tmpDir('shadow');
    history = new ShadowHistory({ base });
  });
  afterEach(() => rmrf(base, ...cleanup.splice(0)));

  it("never writes the user's refs, index, stash, HEAD or config: .git is the same byte for byte", async () => {
    const repo = makeRepo();
    cleanup.push(repo);
    write(repo, 'a.txt', 'stashed change\n');
    git(repo, 'stash', '-q');
    write(repo, 'c.txt', 'staged\n');
    git(repo, 'add', 'c.txt');
    write(repo, 'a.txt', 'unstaged\n');
    const gitBefore = treeHash(path.join(repo, '.git'));

    const before = await history.snapshot(repo, 'turns/t1/before');
    write(repo, 'a.txt', 'agent wrote\n');
    write(repo, 'new.txt', 'new\n');
    fs.rmSync(path.join(repo, 'src/b.ts'));
    const after = await history.changedSince(repo, before, 'turns/t1/after');
    assert.deepEqual(after.files, ['a.txt', 'new.txt', 'src/b.ts']);
    assert.deepEqual(await history.differing(repo, after.snapshot, after.files), []);
    await history.restore(repo, before, after.files);

    assert.equal(treeHash(path.join(repo, '.git')), gitBefore);
    assert.equal(read(repo, 'a.txt').toString(), 'unstaged\n');
    assert.equal(git(repo, 'stash', 'list').split('\n').filter(Boolean).length, 1);
    assert.equal(git(repo, 'diff', '--cached', '--name-only').trim(), 'c.txt');
  });

  it('restores byte for byte: modified files, created files removed, deleted files back, modes kept', async () => {
    const dir = tmpDir('plain');
    cleanup.push(dir);
    const binary = Buffer.from([0, 255, 13, 10, 10, 13, 0, 1, 2]);
    write(dir, 'bin.dat', binary);
    write(dir, 'crlf.txt', 'one\r\ntwo\r\n');
    write(dir, 'sub/deep/keep.txt', 'keep\n');
    write(dir, 'run.sh', '#!/bin/sh\necho hi\n');
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
    fs.symlinkSync('crlf.txt', path.join(dir, 'link'));
    const start = treeHash(dir);

    const before = await history.snapshot(dir, 'turns/t/before');
    write(dir, 'bin.dat', Buffer.from([1, 2, 3]));
    write(dir, 'crlf.txt', 'one\ntwo\n');
    fs.rmSync(path.join(dir, 'sub'), { recursive: true });
    write(dir, 'made/by/agent.txt', 'made\n');
    fs.chmodSync(path.join(dir, 'run.sh'), 0o644);
    fs.rmSync(path.join(dir, 'link'));
    fs.symlinkSync('bin.dat', path.join(dir, 'link'));
    const after = await history.changedSince(dir, before, 'turns/t/after');
    assert.deepEqual(after.files, ['bin.dat', 'crlf.txt', 'link', 'made/by/agent.txt', 'run.sh', 'sub/deep/keep.txt']);

    await history.restore(dir, before, after.files);
    assert.equal(treeHash(dir), start, 'the directory is as it was, byte for byte (the made directories gone too)');
    assert.deepEqual(read(dir, 'bin.dat'), binary);
  });

  it('works on a directory that is no repository, and makes none there', async () => {
    const dir = tmpDir('plain');
    cleanup.push(dir);
    write(dir, 'a.txt', 'a\n');
    const before = await history.snapshot(dir, 'x/before');
    write(dir, 'a.txt', 'b\n');
    const { files } = await history.changedSince(dir, before, 'x/after');
    assert.deepEqual(files, ['a.txt']);
    await history.restore(dir, before, files);
    assert.equal(read(dir, 'a.txt').toString(), 'a\n');
    assert.equal(fs.existsSync(path.join(dir, '.git')), false);
    assert.deepEqual(fs.readdirSync(dir), ['a.txt']);
  });

  it('skips what .gitignore and info/exclude ignore, but keeps a tracked file the rules match', async () => {
    const repo = makeRepo(); // .gitignore: build/
    cleanup.push(repo);
    write(repo, 'build/tracked.js', 'committed despite the rule\n');
    git(repo, 'add', '-f', 'build/tracked.js');
    git(repo, 'commit', '-q', '-m', 'tracked under an ignored directory');
    write(repo, 'node_modules/pkg/index.js', 'dependency\n');
    write(repo, '.gitignore', 'build/\nnode_modules/\n');
    fs.appendFileSync(path.join(repo, '.git/info/exclude'), 'local-only.log\n');
    write(repo, 'local-only.log', 'log\n');

    const before = await history.snapshot(repo, 't/before');
    write(repo, 'build/tracked.js', 'the agent changed it\n');
    write(repo, 'build/output.js', 'generated\n');
    write(repo, 'node_modules/pkg/index.js', 'changed dependency\n');
    write(repo, 'local-only.log', 'more log\n');
    const { files } = await history.changedSince(repo, before, 't/after');
    assert.deepEqual(files, ['build/tracked.js']);
    await history.restore(repo, before, files);
    assert.equal(read(repo, 'build/tracked.js').toString(), 'committed despite the rule\n');
    assert.equal(read(repo, 'build/output.js').toString(), 'generated\n', 'an ignored file is left alone');
  });

  it('names the files changed outside the agent since a snapshot', async () => {
    const dir = tmpDir('plain');
    cleanup.push(dir);
    write(dir, 'a.txt', 'a\n');
    write(dir, 'b.txt', 'b\n');
    const snap = await history.snapshot(dir, 's/1');
    write(dir, 'b.txt', 'changed by the user\n');
    write(dir, 'c.txt', 'new, not asked about\n');
    assert.deepEqual(await history.differing(dir, snap, ['a.txt', 'b.txt']), ['b.txt']);
  });

  it("runs nothing a repository configures (hooks, filters, fsmonitor…) and stores the files' own bytes", async () => {
    const hostile = hostileRepo();
    cleanup.push(path.dirname(hostile.repo));
    write(hostile.repo, 'crlf.txt', 'x\r\ny\n');
    fs.appendFileSync(path.join(hostile.repo, '.gitattributes'), '*.txt text eol=crlf\n');
    const before = await history.snapshot(hostile.repo, 'h/before');
    write(hostile.repo, 'a.txt', 'changed\n');
    write(hostile.repo, 'crlf.txt', 'z\n');
    write(hostile.repo, 'b.weird', 'changed weird\n');
    const after = await history.changedSince(hostile.repo, before, 'h/after');
    await history.differing(hostile.repo, after.snapshot, after.files);
    await history.restore(hostile.repo, before, after.files);
    assert.deepEqual(hostile.ran(), [], 'no program of the repository ran');
    assert.equal(read(hostile.repo, 'a.txt').toString(), 'one\ntwo\nthree\n');
    assert.equal(read(hostile.repo, 'crlf.txt').toString(), 'x\r\ny\n');
    assert.equal(read(hostile.repo, 'b.weird').toString(), 'weird\n');
    // The fixture is armed: the user's own git does run them.
    plainGit(hostile.repo, 'status');
    assert.ok(hostile.ran().length > 0);
  });

  it('refuses relative roots, missing roots, bad snapshot ids and names', async () => {
    const dir = tmpDir('plain');
    cleanup.push(dir);
    await assert.rejects(history.snapshot('relative/dir', 'a'), /must be an absolute path/);
    await assert.rejects(history.snapshot(path.join(dir, 'missing'), 'a'), /does not exist/);
    await assert.rejects(history.snapshot(dir, '../escape'), /not a snapshot name/);
    await assert.rejects(history.restore(dir, 'HEAD~1', ['a']), /not a snapshot id/);
  });
});
