import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo } from '../../../../src/application/index.ts';
import type { ResourceDefinition } from '../../../../src/domain/registry/resource.definition.ts';
import { exists, fingerprint, git, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('GitSandboxManager with an fs-directory resource', () => {
  let dir: string;
  let data: string;
  let manager: GitSandboxManager;
  let resource: ResourceDefinition;

  beforeEach(() => {
    dir = tmpDir('dir');
    write(dir, 'notes.txt', 'first\n');
    write(dir, 'docs/guide.md', '# Guide\n');
    write(dir, 'gone.txt', 'to be deleted\n');
    write(dir, '.gitignore', '*.log\n');
    write(dir, 'debug.log', 'ignored by git, still copied\n');
    write(dir, '.git/junk', 'a stray .git directory is not copied\n');
    fs.symlinkSync('notes.txt', path.join(dir, 'link'));
    data = tmpDir('data');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
    resource = { name: 'local/docs', type: 'fs-directory', path: dir };
  });
  afterEach(() => rmrf(dir, data));

  it('copies the directory (without .git) into a private repository, leaving the source as it was', async () => {
    const before = fingerprint(dir);
    const sb = await manager.create('P1', resource);
    assert.equal(fingerprint(dir), before);
    assert.equal(sb.kind, 'copy');
    assert.equal(sb.branch, undefined);
    assert.equal(read(sb.root, 'docs/guide.md'), '# Guide\n');
    assert.equal(read(sb.root, 'debug.log'), 'ignored by git, still copied\n');
    assert.equal(fs.readlinkSync(path.join(sb.root, 'link')), 'notes.txt');
    assert.equal(exists(path.join(sb.root, '.git/junk')), false);
    assert.equal(git(sb.root, 'rev-parse', 'HEAD'), sb.baseCommit);
    assert.equal(
      git(sb.root, 'status', '--porcelain', '--ignored'),
      '',
      'everything, ignored files included, is in the base',
    );
    assert.ok(exists(path.join(sb.root, '.git', 'cleveragents-base.json')));
    assert.deepEqual(await manager.create('P1', resource), sb);
  });

  it('checkpoints, restores and diffs like a worktree', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'notes.txt', 'first\nsecond\n');
    const c1 = await manager.checkpoint(sb, 'one');
    write(sb.root, 'extra.log', 'new ignored-pattern file\n');
    const d = await manager.diff(sb);
    assert.deepEqual(
      d.files.map((f) => [f.path, f.status, f.additions, f.deletions]),
      [
        ['extra.log', 'added', 1, 0],
        ['notes.txt', 'modified', 1, 0],
      ],
    );
    await manager.restore(sb, c1);
    assert.equal(exists(path.join(sb.root, 'extra.log')), false);
    assert.equal(read(sb.root, 'notes.txt'), 'first\nsecond\n');
  });

  describe('apply', () => {
    let sb: SandboxInfo;
    beforeEach(async () => {
      sb = await manager.create('P1', resource);
      write(sb.root, 'notes.txt', 'first\nedited by the plan\n');
      write(sb.root, 'docs/new/page.md', 'new page\n');
      fs.rmSync(path.join(sb.root, 'gone.txt'));
      fs.chmodSync(path.join(sb.root, 'docs/guide.md'), 0o755);
    });

    it('writes the changed files back and deletes the deleted ones', async () => {
      write(dir, 'unrelated.txt', 'the user may change other files\n');
      const out = await manager.apply(sb, 'apply');
      assert.deepEqual(out, { ok: true, files: ['docs/guide.md', 'docs/new/page.md', 'gone.txt', 'notes.txt'] });
      assert.equal(read(dir, 'notes.txt'), 'first\nedited by the plan\n');
      assert.equal(read(dir, 'docs/new/page.md'), 'new page\n');
      assert.equal(exists(path.join(dir, 'gone.txt')), false);
      assert.equal(fs.statSync(path.join(dir, 'docs/guide.md')).mode & 0o777, 0o755);
      assert.equal(read(dir, 'unrelated.txt'), 'the user may change other files\n');
      assert.deepEqual(
        fs.readdirSync(dir).filter((n) => n.includes('cleveragents')),
        [],
        'no temporary files left',
      );
    });

    for (const [what, change] of [
      ['modified', (d: string) => write(d, 'notes.txt', 'user edit\n')],
      ['deleted', (d: string) => fs.rmSync(path.join(d, 'notes.txt'))],
      ['created', (d: string) => write(d, 'docs/new/page.md', 'the user wrote this first\n')],
    ] as const) {
      it(`refuses with a conflict when the user ${what} a file the plan changed, writing nothing`, async () => {
        change(dir);
        const before = fingerprint(dir);
        const out = await manager.apply(sb, 'apply');
        assert.equal(out.ok, false);
        assert.equal(!out.ok && out.reason, 'conflict');
        assert.equal(!out.ok && out.files.length, 1);
        assert.equal(fingerprint(dir), before);
      });
    }
  });

  it('applies a file the plan replaced by a directory of the same name', async () => {
    const sb = await manager.create('P2', resource);
    fs.rmSync(path.join(sb.root, 'gone.txt'));
    write(sb.root, 'gone.txt/inner.txt', 'now a directory\n');
    assert.deepEqual(await manager.apply(sb, 'apply'), { ok: true, files: ['gone.txt', 'gone.txt/inner.txt'] });
    assert.equal(read(dir, 'gone.txt/inner.txt'), 'now a directory\n');
  });

  it('removes the copy, idempotently', async () => {
    const sb = await manager.create('P1', resource);
    await manager.remove(sb);
    assert.equal(exists(sb.root), false);
    assert.equal(exists(path.dirname(sb.root)), false);
    await manager.remove(sb);
    assert.equal(read(dir, 'notes.txt'), 'first\n');
  });

  it('refuses a data directory inside the resource, or the resource inside the data directory, leaving no trace', async () => {
    const before = fingerprint(dir);
    await assert.rejects(
      new GitSandboxManager({ root: path.join(dir, 'state', 'sandboxes') }).create('P1', resource),
      /overlap/,
    );
    assert.equal(fingerprint(dir), before);
    await assert.rejects(new GitSandboxManager({ root: path.dirname(dir) }).create('P1', resource), /overlap/);
  });
});
