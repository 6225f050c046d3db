import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo } from '../../../../src/application/index.ts';
import type { LocalResource } from '../../../../src/domain/registry/resource.definition.ts';
import { exists, fingerprint, git, makeRepo, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('GitSandboxManager with a git-checkout resource', () => {
  let repo: string;
  let data: string;
  let manager: GitSandboxManager;
  let resource: LocalResource;

  beforeEach(() => {
    repo = makeRepo();
    data = tmpDir('data');
    manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
    resource = { name: 'local/app', type: 'git-checkout', path: repo };
  });
  afterEach(() => rmrf(repo, data));

  it('creates a worktree on the plan branch without changing a byte of the user tree, index or HEAD', async () => {
    // A user in the middle of work: a modified file, a staged change, an untracked and an ignored file.
    write(repo, 'a.txt', 'one\nTWO (unsaved work)\nthree\n');
    write(repo, 'c.txt', 'staged\n');
    git(repo, 'add', 'c.txt');
    write(repo, 'notes.md', 'untracked\n');
    write(repo, 'build/out.js', 'ignored\n');
    const head = git(repo, 'rev-parse', 'HEAD');
    const before = fingerprint(repo);

    const sb = await manager.create('P1', resource);

    assert.equal(fingerprint(repo), before);
    assert.equal(sb.kind, 'git-worktree');
    assert.equal(sb.branch, 'cleveragents/plan-P1');
    assert.equal(sb.targetBranch, 'main');
    assert.equal(sb.baseCommit, head);
    assert.equal(sb.source, repo);
    assert.equal(sb.root, path.join(fs.realpathSync(data), 'sandboxes', 'P1', 'local.app'));
    assert.equal(git(repo, 'rev-parse', 'cleveragents/plan-P1'), head);
    // The sandbox holds the committed state, not the user's uncommitted work.
    assert.equal(read(sb.root, 'a.txt'), 'one\ntwo\nthree\n');
    assert.equal(exists(path.join(sb.root, 'notes.md')), false);
    assert.equal(git(sb.root, 'status', '--porcelain'), '');
  });

  it('returns the existing sandbox when created again, and recreates a worktree removed by hand', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'new.txt', 'kept\n');
    assert.deepEqual(await manager.create('P1', resource), sb);
    assert.equal(read(sb.root, 'new.txt'), 'kept\n');

    await manager.checkpoint(sb, 'work');
    fs.rmSync(sb.root, { recursive: true, force: true });
    assert.deepEqual(await manager.create('P1', resource), sb);
    assert.equal(read(sb.root, 'new.txt'), 'kept\n', 'the plan branch, with its checkpoints, is checked out again');
  });

  it('starts from the resource branch when one is given', async () => {
    git(repo, 'checkout', '-q', '-b', 'dev');
    write(repo, 'dev.txt', 'dev\n');
    git(repo, 'add', 'dev.txt');
    git(repo, 'commit', '-q', '-m', 'dev work');
    git(repo, 'checkout', '-q', 'main');
    const sb = await manager.create('P2', { name: 'local/app', type: 'git-checkout', path: repo, branch: 'dev' });
    assert.equal(sb.targetBranch, 'dev');
    assert.equal(sb.baseCommit, git(repo, 'rev-parse', 'dev'));
    assert.equal(read(sb.root, 'dev.txt'), 'dev\n');
  });

  it('refuses a path inside a work tree, ids that are not plan ids, and a data directory inside the repository', async () => {
    await assert.rejects(
      manager.create('P1', { ...resource, path: path.join(repo, 'src') }),
      /is inside the git work tree/,
    );
    await assert.rejects(manager.create('../evil', resource), /invalid plan id/);
    const before = fingerprint(repo);
    await assert.rejects(
      new GitSandboxManager({ root: path.join(repo, '.cache', 'sandboxes') }).create('P1', resource),
      /overlap/,
    );
    assert.equal(fingerprint(repo), before);
  });

  it('checkpoints with the fixed identity and restores files and removes untracked ones', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'one\nchanged\nthree\n');
    const first = await manager.checkpoint(sb, 'first');
    assert.equal(git(sb.root, 'rev-parse', 'HEAD'), first);
    assert.equal(
      git(sb.root, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s'),
      'CleverAgents <plans@cleveragents.invalid>|CleverAgents <plans@cleveragents.invalid>|checkpoint: first',
    );
    assert.equal(git(repo, 'rev-parse', 'cleveragents/plan-P1'), first, 'the checkpoint is on the plan branch');

    write(sb.root, 'a.txt', 'later\n');
    write(sb.root, 'more.txt', 'more\n');
    const second = await manager.checkpoint(sb, 'second');
    write(sb.root, 'scratch/tmp.txt', 'untracked\n');
    write(sb.root, 'build/ignored.js', 'ignored\n');

    await manager.restore(sb, first);
    assert.equal(git(sb.root, 'rev-parse', 'HEAD'), first);
    assert.equal(read(sb.root, 'a.txt'), 'one\nchanged\nthree\n');
    for (const gone of ['more.txt', 'scratch/tmp.txt', 'build/ignored.js'])
      assert.equal(exists(path.join(sb.root, gone)), false, gone);
    assert.equal(git(sb.root, 'status', '--porcelain', '--ignored'), '');

    await manager.restore(sb, second);
    assert.equal(read(sb.root, 'more.txt'), 'more\n');
    const empty = await manager.checkpoint(sb, 'nothing new');
    assert.notEqual(empty, second, 'an empty checkpoint is still a commit');
  });

  it('with the changed paths, records those paths only; without them, or when it cannot, git scans the sandbox', async () => {
    const sb = await manager.create('P1', resource);
    await manager.checkpoint(sb, 'before-execute');
    write(sb.root, 'a.txt', 'reported\n');
    write(sb.root, 'c.txt', 'not reported\n');
    const known = await manager.checkpoint(sb, 'after-step:1', ['a.txt']);
    assert.equal(git(sb.root, 'rev-parse', 'HEAD'), known);
    assert.equal(git(sb.root, 'show', `${known}:a.txt`), 'reported');
    assert.equal(git(sb.root, 'show', `${known}:c.txt`), 'see', 'only the paths it was told of');
    assert.equal(git(sb.root, 'status', '--porcelain'), ' M c.txt', 'the index holds the checkpoint');
    // A path it leaves to git (an ignore file): the whole sandbox is committed.
    write(sb.root, '.gitignore', 'build/\ntmp/\n');
    const scanned = await manager.checkpoint(sb, 'after-step:2', ['.gitignore']);
    assert.equal(git(sb.root, 'show', `${scanned}:c.txt`), 'not reported');
    assert.equal(git(sb.root, 'show', `${scanned}:.gitignore`), 'build/\ntmp/');
    assert.equal(git(sb.root, 'status', '--porcelain'), '');
    await manager.remove(sb);
  });

  it('refuses to restore something that is not a checkpoint of the sandbox', async () => {
    const sb = await manager.create('P1', resource);
    await assert.rejects(manager.restore(sb, '--hard'), /not a commit id/);
    await assert.rejects(manager.restore(sb, 'deadbeef'), /no checkpoint deadbeef/);
    const orphan = git(repo, 'commit-tree', git(repo, 'rev-parse', 'HEAD^{tree}'), '-m', 'unrelated');
    await assert.rejects(manager.restore(sb, orphan), /does not descend from its base/);
  });

  it('diffs committed and uncommitted changes against the base, with per-file stats, and no side effects', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'one\n2\nthree\nfour\n');
    await manager.checkpoint(sb, 'edit a');
    fs.rmSync(path.join(sb.root, 'c.txt'));
    write(sb.root, 'new/file.txt', 'x\ny\n');
    write(sb.root, 'img.bin', Buffer.from([0, 1, 2, 3, 0, 255]));
    const statusBefore = git(sb.root, 'status', '--porcelain', '--untracked-files=all');

    const d = await manager.diff(sb);

    assert.equal(
      git(sb.root, 'status', '--porcelain', '--untracked-files=all'),
      statusBefore,
      'diff changed nothing in the sandbox',
    );
    const byPath = Object.fromEntries(d.files.map((f) => [f.path, f]));
    assert.deepEqual(byPath['a.txt'], {
      path: 'a.txt',
      status: 'modified',
      additions: 2,
      deletions: 1,
      size: 17,
      binary: false,
    });
    assert.deepEqual(byPath['c.txt'], {
      path: 'c.txt',
      status: 'deleted',
      additions: 0,
      deletions: 1,
      size: 0,
      binary: false,
    });
    assert.deepEqual(byPath['new/file.txt'], {
      path: 'new/file.txt',
      status: 'added',
      additions: 2,
      deletions: 0,
      size: 4,
      binary: false,
    });
    assert.deepEqual(byPath['img.bin'], {
      path: 'img.bin',
      status: 'added',
      additions: 0,
      deletions: 0,
      size: 6,
      binary: true,
    });
    assert.deepEqual(d.stats, { files: 4, additions: 4, deletions: 2 });
    assert.match(d.unified, /^diff --git a\/a\.txt b\/a\.txt$/m);
    assert.match(d.unified, /^\+four$/m);
    assert.match(d.unified, /^Binary files \/dev\/null and b\/img\.bin differ$/m);
  });

  it('reports a rename as one renamed file', async () => {
    const sb = await manager.create('P1', resource);
    fs.renameSync(path.join(sb.root, 'src/b.ts'), path.join(sb.root, 'src/renamed.ts'));
    const d = await manager.diff(sb);
    assert.deepEqual(d.files, [
      { path: 'src/renamed.ts', status: 'renamed', additions: 0, deletions: 0, size: 20, binary: false },
    ]);
  });

  it('gives the patch of a plain git diff and every file, whatever characters their names hold', async () => {
    const sb = await manager.create('P1', resource);
    const names = ['sp ace.txt', 'tab\there.txt', 'new\nline.txt', 'ünï.txt'];
    for (const n of names) write(sb.root, n, `${n}\n`);
    fs.renameSync(path.join(sb.root, 'src/b.ts'), path.join(sb.root, 'src/re named.ts'));
    write(sb.root, 'a.txt', 'one\n2\n');

    const d = await manager.diff(sb);

    assert.deepEqual(d.files.map((f) => `${f.status} ${f.path} +${f.additions} -${f.deletions}`).sort(), [
      'added new\nline.txt +2 -0',
      'added sp ace.txt +1 -0',
      'added tab\there.txt +1 -0',
      'added ünï.txt +1 -0',
      'modified a.txt +1 -2',
      'renamed src/re named.ts +0 -0',
    ]);
    git(sb.root, 'add', '-A');
    const plain = execFileSync(
      'git',
      [
        '-C',
        sb.root,
        '-c',
        'core.quotePath=false',
        'diff',
        '--no-color',
        '--no-ext-diff',
        '-M',
        '--src-prefix=a/',
        '--dst-prefix=b/',
        '--cached',
        sb.baseCommit,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(d.unified, plain);
  });

  describe('apply', () => {
    let sb: SandboxInfo;
    beforeEach(async () => {
      sb = await manager.create('P1', resource);
      write(sb.root, 'a.txt', 'one\nTWO\nthree\n');
      write(sb.root, 'added.txt', 'added by the plan\n');
      await manager.checkpoint(sb, 'work');
    });

    it('squashes the plan into one commit on the user branch, keeping unrelated local changes', async () => {
      // Meanwhile the user committed elsewhere and has unrelated staged and unstaged changes.
      write(repo, 'c.txt', 'user commit\n');
      git(repo, 'commit', '-q', '-am', 'user work');
      const userTip = git(repo, 'rev-parse', 'HEAD');
      write(repo, '.gitignore', 'build/\n# unstaged\n');
      write(repo, 'staged.txt', 'staged\n');
      git(repo, 'add', 'staged.txt');
      // Pending sandbox work is included too.
      fs.rmSync(path.join(sb.root, 'src/b.ts'));
      write(sb.root, 'src/c.ts', 'export const c = 3;\n');

      const out = await manager.apply(sb, 'plan P1: make TWO loud');

      assert.equal(out.ok, true, JSON.stringify(out));
      assert.ok(out.ok && out.commit);
      const commit = out.ok ? out.commit : '';
      assert.equal(git(repo, 'rev-parse', 'HEAD'), commit);
      assert.equal(git(repo, 'rev-parse', 'HEAD^'), userTip, 'one commit on top of the user branch');
      assert.equal(git(repo, 'log', '-1', '--format=%P'), userTip, 'a squash: one parent');
      assert.equal(git(repo, 'log', '-1', '--format=%s'), 'plan P1: make TWO loud');
      assert.deepEqual(out.ok && [...out.files].sort(), ['a.txt', 'added.txt', 'src/b.ts', 'src/c.ts']);
      assert.equal(read(repo, 'a.txt'), 'one\nTWO\nthree\n');
      assert.equal(read(repo, 'added.txt'), 'added by the plan\n');
      assert.equal(read(repo, 'c.txt'), 'user commit\n');
      assert.equal(read(repo, '.gitignore'), 'build/\n# unstaged\n', 'unrelated unstaged change kept');
      assert.equal(exists(path.join(repo, 'src/b.ts')), false);
      assert.equal(
        git(repo, 'diff', '--cached', '--name-only'),
        'staged.txt',
        'unrelated staged change still staged, not committed',
      );
      assert.equal(git(repo, 'show', '--name-only', '--format=', 'HEAD'), 'a.txt\nadded.txt\nsrc/b.ts\nsrc/c.ts');
    });

    it("commits with the repository's git identity as author and the agent as committer", async () => {
      git(repo, 'config', 'user.name', 'Ada Lovelace');
      git(repo, 'config', 'user.email', 'ada@example.invalid');

      const out = await manager.apply(sb, 'plan P1: make TWO loud');

      assert.equal(out.ok, true, JSON.stringify(out));
      assert.equal(
        git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>'),
        'Ada Lovelace <ada@example.invalid>|CleverAgents <plans@cleveragents.invalid>',
      );
      // Applied again (as after a recovery that completed it): recognised as this apply's commit.
      const again = await manager.apply(sb, 'plan P1: make TWO loud');
      assert.deepEqual(again, { ok: true, commit: out.ok ? out.commit : '', files: ['a.txt', 'added.txt'] });
    });

    it('commits as the agent for both when the repository has no git identity', async () => {
      const home = process.env['HOME'];
      const xdg = process.env['XDG_CONFIG_HOME'];
      // No global identity either: an empty home and XDG config directory for the agent's git.
      process.env['HOME'] = process.env['XDG_CONFIG_HOME'] = tmpDir('home');
      try {
        git(repo, 'config', 'user.name', 'Half An Identity');
        const out = await manager.apply(sb, 'plan P1: make TWO loud');
        assert.equal(out.ok, true, JSON.stringify(out));
        assert.equal(
          git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>'),
          'CleverAgents <plans@cleveragents.invalid>|CleverAgents <plans@cleveragents.invalid>',
        );
      } finally {
        rmrf(process.env['HOME'] ?? '');
        if (home === undefined) delete process.env['HOME'];
        else process.env['HOME'] = home;
        if (xdg === undefined) delete process.env['XDG_CONFIG_HOME'];
        else process.env['XDG_CONFIG_HOME'] = xdg;
      }
    });

    it('refuses a conflict with a user commit before writing anything', async () => {
      write(repo, 'a.txt', 'one\nzwei\nthree\n');
      git(repo, 'commit', '-q', '-am', 'user edits the same line');
      const before = fingerprint(repo);

      const out = await manager.apply(sb, 'apply');

      assert.deepEqual(out.ok ? out : { ...out, message: '' }, {
        ok: false,
        reason: 'conflict',
        files: ['a.txt'],
        message: '',
      });
      assert.match(out.ok ? '' : out.message, /conflict with main in: a\.txt/);
      assert.equal(fingerprint(repo), before);
    });

    it('refuses when a file the plan changed is modified in the user tree, changing nothing', async () => {
      write(repo, 'a.txt', 'one\nlocal edit\nthree\n');
      const before = fingerprint(repo);
      const out = await manager.apply(sb, 'apply');
      assert.equal(out.ok, false);
      assert.equal(!out.ok && out.reason, 'dirty');
      assert.deepEqual(!out.ok && out.files, ['a.txt']);
      assert.equal(fingerprint(repo), before);
    });

    it('refuses when a file the plan adds exists untracked, or is staged, in the user tree', async () => {
      write(repo, 'added.txt', 'mine\n');
      let before = fingerprint(repo);
      let out = await manager.apply(sb, 'apply');
      assert.deepEqual(!out.ok && [out.reason, out.files], ['dirty', ['added.txt']]);
      assert.equal(fingerprint(repo), before);

      git(repo, 'add', 'added.txt');
      before = fingerprint(repo);
      out = await manager.apply(sb, 'apply');
      assert.deepEqual(!out.ok && [out.reason, out.files], ['dirty', ['added.txt']]);
      assert.equal(fingerprint(repo), before);
    });

    it('refuses when the user is on another branch', async () => {
      git(repo, 'checkout', '-q', '-b', 'elsewhere');
      const before = fingerprint(repo);
      const out = await manager.apply(sb, 'apply');
      assert.equal(!out.ok && out.reason, 'dirty');
      assert.match(!out.ok ? out.message : '', /is on branch elsewhere; check out main/);
      assert.equal(fingerprint(repo), before);
    });

    it('applies nothing (and makes no commit) when the plan changed nothing', async () => {
      const empty = await manager.create('P9', resource);
      const head = git(repo, 'rev-parse', 'HEAD');
      assert.deepEqual(await manager.apply(empty, 'nothing'), { ok: true, files: [] });
      assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
    });
  });

  it('creates and removes many sandboxes of one repository at once (git worktree add, prune and remove race otherwise)', async () => {
    // `git worktree prune` of one plan deletes the admin directory another plan's `worktree add`
    // has just made and not yet filled in ("could not open .git/worktrees/…/gitdir").
    const ids = Array.from({ length: 12 }, (_, i) => `C${i}`);
    const made = await Promise.all(ids.map((id) => manager.create(id, resource)));
    for (const sb of made) assert.equal(git(sb.root, 'status', '--porcelain'), '', sb.root);
    const again = await Promise.all(ids.map((id) => manager.create(`D${id}`, resource)));
    await Promise.all([...made.map((sb) => manager.remove(sb)), ...again.map((sb) => manager.checkpoint(sb, 'w'))]);
    for (const sb of made) assert.equal(exists(sb.root), false);
    for (const sb of again) assert.equal(exists(path.join(sb.root, '.git')), true, sb.root);
    assert.equal(git(repo, 'worktree', 'list').split('\n').length, 1 + again.length);
  });

  it('removes the worktree and the plan branch, after apply too, and again without error', async () => {
    const sb = await manager.create('P1', resource);
    write(sb.root, 'a.txt', 'applied\n');
    const out = await manager.apply(sb, 'apply');
    assert.equal(out.ok, true);
    await manager.remove(sb);
    assert.equal(exists(sb.root), false);
    assert.equal(exists(`${sb.root}.sandbox.json`), false);
    assert.equal(git(repo, 'branch', '--list', 'cleveragents/*'), '');
    assert.doesNotMatch(git(repo, 'worktree', 'list', '--porcelain'), /P1/);
    assert.equal(read(repo, 'a.txt'), 'applied\n');
    await manager.remove(sb);
  });

  it('refuses to touch a directory that is not one of its sandboxes', async () => {
    const sb = await manager.create('P1', resource);
    const forged = { ...sb, root: repo };
    // Outside our sandbox directory: another instance's (with another data directory), never touched here.
    const elsewhere = (err: Error & { reason?: string }): boolean => {
      assert.equal(err.reason, 'UNAVAILABLE');
      assert.match(err.message, /is not reachable from this instance/);
      return true;
    };
    await assert.rejects(manager.restore(forged, sb.baseCommit), elsewhere);
    await assert.rejects(manager.remove(forged), elsewhere);
    await assert.rejects(manager.remove({ ...sb, branch: 'main' }), /not a plan branch/);
    assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
  });

  it("says clearly when a plan's sandbox is not reachable here (another instance made it on a volume not mounted here)", async () => {
    const sb = await manager.create('P1', resource);
    const elsewhere = { ...sb, root: sb.root.replace(/P1/, 'P2') };
    await assert.rejects(manager.diff(elsewhere), (err: Error & { reason?: string; hint?: string }) => {
      assert.equal(err.reason, 'UNAVAILABLE');
      assert.match(err.message, /sandbox .*P2.* is not reachable from this instance/);
      assert.match(err.hint ?? '', /same data directory/);
      return true;
    });
  });

  it("says which sandbox directory holds a plan's sandbox made by an instance with another data directory, and touches nothing", async () => {
    const sb = await manager.create('P1', resource);
    await manager.assertReachable(sb);
    const theirs = path.join(path.dirname(repo), 'other-instance', 'sandboxes');
    const other = { ...sb, root: path.join(theirs, 'P1', 'local.app') };
    for (const call of [manager.assertReachable(other), manager.diff(other), manager.apply(other, 'apply')]) {
      await assert.rejects(call, (err: Error & { reason?: string; hint?: string }) => {
        assert.equal(err.reason, 'UNAVAILABLE');
        assert.match(err.message, /sandbox .*other-instance.* is not reachable from this instance/);
        assert.ok(
          err.hint?.startsWith(`it is in ${theirs}, the sandbox directory of the instance that executed the plan`),
        );
        return true;
      });
    }
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });
});
