/** GitSandboxManager.rebase / unresolved / remove on real repositories: a plan's sandbox brought onto a moved base. */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { ResourceDefinition } from '../../../../src/domain/registry/resource.definition.ts';
import { exists, fingerprint, git, makeRepo, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('GitSandboxManager.rebase', () => {
  let repo: string;
  let data: string;
  let manager: GitSandboxManager;
  let resource: Extract<ResourceDefinition, { type: 'git-checkout' }>;

  beforeEach(() => {
    repo = makeRepo();
    data = tmpDir('data');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
    resource = { name: 'local/app', type: 'git-checkout', path: repo };
  });
  afterEach(() => rmrf(repo, data));

  /** The user commits on main. */
  const commit = (rel: string, content: string, message: string): string => {
    write(repo, rel, content);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', message);
    return git(repo, 'rev-parse', 'HEAD');
  };

  it('is up to date when the target branch has not moved, and changes nothing', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'one\nTWO\nthree\n');
    const head = git(sb.root, 'rev-parse', 'HEAD');
    const out = await manager.rebase(sb);
    assert.deepEqual(out, { ok: true, moved: false, sandbox: sb, files: [] });
    assert.equal(git(sb.root, 'rev-parse', 'HEAD'), head);
    assert.equal(read(sb.root, 'a.txt'), 'one\nTWO\nthree\n', 'pending work is kept');
  });

  it('clean: the plan changes (pending ones too) sit on the new head, which becomes the base; the user repo is untouched', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'one\nTWO\nthree\n');
    await manager.checkpoint(sb, 'step 1');
    write(sb.root, 'new.txt', 'pending\n');
    const moved = commit('c.txt', 'see more\n', 'user work');
    const before = fingerprint(repo);

    const out = await manager.rebase(sb);

    assert.equal(out.ok, true);
    assert.ok(out.ok && out.moved);
    assert.equal(out.sandbox.baseCommit, moved);
    assert.deepEqual([...out.files].sort(), ['a.txt', 'new.txt']);
    assert.equal(fingerprint(repo), before, 'nothing in the user repository changed');
    assert.equal(read(sb.root, 'c.txt'), 'see more\n', "the user's commit is in the sandbox");
    assert.equal(read(sb.root, 'a.txt'), 'one\nTWO\nthree\n');
    assert.equal(read(sb.root, 'new.txt'), 'pending\n');
    assert.equal(git(sb.root, 'status', '--porcelain'), '');
    assert.equal(git(sb.root, 'rev-parse', 'HEAD^'), moved, 'one commit on top of the new head');
    // diff is against the new base: only the plan's changes, not the user's commit.
    const diff = await manager.diff(out.sandbox);
    assert.deepEqual(diff.files.map((f) => f.path).sort(), ['a.txt', 'new.txt']);
    // The info on disk follows: create hands out the rebased sandbox.
    assert.deepEqual(await manager.create('P1', resource), out.sandbox);
    // And it applies cleanly onto the moved branch.
    const applied = await manager.apply(out.sandbox, 'apply');
    assert.equal(applied.ok, true);
    assert.equal(read(repo, 'a.txt'), 'one\nTWO\nthree\n');
    assert.equal(read(repo, 'c.txt'), 'see more\n');
  });

  it('conflict: markers in the conflicting file, committed, no rebase or merge in progress; unresolved until fixed', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'one\nplan\nthree\n');
    write(sb.root, 'src/b.ts', 'export const b = 2;\n');
    await manager.checkpoint(sb, 'step 1');
    const moved = commit('a.txt', 'one\nuser\nthree\n', 'same line');
    const before = fingerprint(repo);

    const out = await manager.rebase(sb);

    assert.equal(out.ok, false);
    assert.ok(!out.ok);
    assert.equal(out.reason, 'conflict');
    assert.deepEqual(out.files, ['a.txt']);
    assert.match(out.message, /conflict with main .* in: a\.txt/);
    assert.equal(out.sandbox.baseCommit, moved);
    assert.equal(fingerprint(repo), before);
    const text = read(sb.root, 'a.txt');
    assert.match(text, /^<<<<<<< main\nuser\n=======\nplan\n>>>>>>> plan cleveragents\/plan-P1\n/m);
    assert.equal(read(sb.root, 'src/b.ts'), 'export const b = 2;\n', 'the clean part of the plan is there');
    assert.equal(git(sb.root, 'status', '--porcelain'), '', 'the markers are committed');
    assert.equal(git(sb.root, 'ls-files', '-u'), '', 'no unmerged index entries');
    const gitDir = git(sb.root, 'rev-parse', '--absolute-git-dir');
    for (const f of ['MERGE_HEAD', 'REBASE_HEAD', 'rebase-merge', 'rebase-apply', 'CHERRY_PICK_HEAD'])
      assert.equal(exists(path.join(gitDir, f)), false, f);
    assert.equal(git(sb.root, 'rev-parse', 'HEAD^'), moved);

    assert.deepEqual(await manager.unresolved(out.sandbox, out.files), ['a.txt']);
    write(sb.root, 'a.txt', 'one\nuser and plan\nthree\n');
    assert.deepEqual(await manager.unresolved(out.sandbox, out.files), []);
    // A checkpoint of the resolution applies onto the moved branch.
    await manager.checkpoint(out.sandbox, 'after-rebase');
    const applied = await manager.apply(out.sandbox, 'apply');
    assert.equal(applied.ok, true, JSON.stringify(applied));
    assert.equal(read(repo, 'a.txt'), 'one\nuser and plan\nthree\n');
  });

  it('treats a deleted file as resolved and a file with only a lone ======= as no conflict', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'notes.md', 'Title\n=======\n');
    assert.deepEqual(await manager.unresolved(sb, ['notes.md', 'gone.txt', '../outside.txt']), []);
    write(sb.root, 'x.txt', 'a\n>>>>>>> theirs\n');
    assert.deepEqual(await manager.unresolved(sb, ['x.txt']), ['x.txt']);
  });

  it('refuses a copy sandbox and a target branch that is gone, changing nothing', async () => {
    const dir = tmpDir('dir');
    try {
      const copy = await manager.create('P2', { name: 'local/docs', type: 'fs-directory', path: dir });
      await assert.rejects(manager.rebase(copy), /not a git checkout: nothing to rebase/);
    } finally {
      rmrf(dir);
    }
    const sb = await manager.create('P1', { ...resource, branch: 'dev' }).catch(() => undefined);
    assert.equal(sb, undefined, 'no dev branch yet');
    git(repo, 'branch', 'dev');
    const dev = await manager.create('P3', { ...resource, branch: 'dev' });
    write(dev.root, 'a.txt', 'changed\n');
    git(repo, 'branch', '-D', 'dev');
    await assert.rejects(manager.rebase(dev), /branch dev no longer exists/);
    assert.equal(read(dev.root, 'a.txt'), 'changed\n');
  });

  it('remove leaves neither the worktree nor the branch, even when the worktree directory was deleted by hand', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'work\n');
    await manager.checkpoint(sb, 'work');
    fs.rmSync(sb.root, { recursive: true, force: true });
    assert.match(git(repo, 'worktree', 'list', '--porcelain'), /P1/, 'git still lists the stale worktree');
    await manager.remove(sb);
    assert.doesNotMatch(git(repo, 'worktree', 'list', '--porcelain'), /P1/);
    assert.equal(git(repo, 'branch', '--list', 'cleveragents/*'), '');
    assert.equal(exists(path.dirname(sb.root)), false, "the plan's sandbox directory is gone");
  });
});
