import { afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ConfinedGit } from '../../../../src/infrastructure/sandbox/confined-git.ts';
import { ConfigGuard, overridesOf } from '../../../../src/infrastructure/sandbox/git-config-guard.ts';
import { GitError, directGit, type GitRunner } from '../../../../src/infrastructure/sandbox/git.ts';
import { CommandConfinement } from '../../../../src/infrastructure/tools/confinement.ts';
import { hostileRepo, plainGit, type Hostile } from '../fixtures/hostile.ts';
import { git, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('the repository configuration our git neutralises', () => {
  it('lists the drivers of the repository scopes only, whatever their names hold', () => {
    const listing = [
      ['system', 'filter.lfs.clean'],
      ['global', 'merge.ours.driver'],
      ['local', 'filter.evil.clean'],
      ['local', 'filter.evil.required'],
      ['local', 'filter.we.ird=name.smudge'],
      ['worktree', 'diff.x.textconv'],
      ['local', 'merge.m.driver'],
      ['local', 'merge.m.name'],
      ['local', 'diff.renames'],
      ['local', 'core.fsmonitor'],
      ['command', 'filter.cmd.clean'],
    ]
      .map(([s, n]) => `${s}\0${n}\0`)
      .join('');
    const o = overridesOf(listing);
    assert.equal(o.includes, false);
    assert.deepEqual(o.settings, [
      ['filter.evil.clean', ''],
      ['filter.evil.smudge', ''],
      ['filter.evil.process', ''],
      ['filter.evil.required', 'false'],
      ['filter.we.ird=name.clean', ''],
      ['filter.we.ird=name.smudge', ''],
      ['filter.we.ird=name.process', ''],
      ['filter.we.ird=name.required', 'false'],
      ['diff.x.command', ''],
      ['diff.x.textconv', ''],
      ['merge.m.driver', 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B'],
    ]);
    assert.equal(overridesOf('local\0include.path\0').includes, true);
    assert.equal(overridesOf('local\0includeif.gitdir:/x/.path\0').includes, true);
    assert.equal(overridesOf('global\0include.path\0').includes, false);
  });

  describe('the cache', () => {
    let repo: string;
    beforeEach(() => {
      repo = tmpDir('guard');
      git(repo, 'init', '-q');
    });
    afterEach(() => rmrf(repo));

    it('lists a repository once while its config files stay as they are, again when they change', async () => {
      const guard = new ConfigGuard();
      let listed = 0;
      const list = async (): Promise<string> => {
        listed++;
        return 'local\0filter.a.clean\0';
      };
      const first = await guard.env(repo, list);
      assert.equal(first['GIT_CONFIG_COUNT'], '4');
      assert.equal(first['GIT_CONFIG_KEY_0'], 'filter.a.clean');
      assert.deepEqual(await guard.env(repo, list), first);
      assert.equal(listed, 1);
      git(repo, 'config', 'filter.b.smudge', 'cat');
      await guard.env(repo, list);
      assert.equal(listed, 2);
    });

    it('lists it every time while its configuration includes other files', async () => {
      const guard = new ConfigGuard();
      let listed = 0;
      const list = async (): Promise<string> => {
        listed++;
        return 'local\0include.path\0';
      };
      await guard.env(repo, list);
      await guard.env(repo, list);
      assert.equal(listed, 2);
    });
  });
});

describe('our git in a repository whose configuration runs programs', () => {
  let h: Hostile;
  let confinement: CommandConfinement;
  let io: string;
  before(async () => {
    confinement = await CommandConfinement.probe({ mode: 'bubblewrap', home: tmpDir('home'), secrets: [] });
    assert.equal(confinement.mode, 'bubblewrap', confinement.describe());
  });
  beforeEach(() => {
    h = hostileRepo();
    io = `${h.repo}.io`;
  });
  afterEach(() => rmrf(path.dirname(h.repo)));

  it('plain git runs them (the fixture is armed)', () => {
    write(h.repo, 'a.txt', 'changed\n');
    plainGit(h.repo, 'status');
    plainGit(h.repo, 'diff');
    assert.ok(h.ran().includes('fsmonitor'), h.ran().join());
    assert.ok(
      h.ran().some((m) => ['process', 'clean'].includes(m)),
      h.ran().join(),
    );
  });

  const runners: [string, () => GitRunner][] = [
    ['run by the agent', () => directGit],
    [
      'run in the confinement',
      () => new ConfinedGit({ confinement, root: h.repo, io, writable: [path.join(h.repo, '.git')] }),
    ],
  ];
  for (const [name, make] of runners) {
    it(`${name}: status, add, diff, commit, log, merge-tree and checkout run none of them; content is stored as it is`, async () => {
      const run = make();
      const o = { workTree: h.repo, identity: true };
      try {
        git(
          h.repo,
          '-c',
          'core.hooksPath=/dev/null',
          '-c',
          'filter.evil.process=',
          '-c',
          'filter.evil.clean=',
          'branch',
          'side',
        );
        write(h.repo, 'a.txt', 'one\nTWO\nthree\n');
        write(h.repo, 'b.weird', 'still weird\n');
        assert.match((await run.run(h.repo, ['status', '--porcelain'], o)).stdout, /M a\.txt/);
        await run.run(h.repo, ['add', '-A'], o);
        assert.match(
          (await run.run(h.repo, ['diff', '--cached', '--no-ext-diff', '--no-textconv'], o)).stdout,
          /\+TWO/,
        );
        // A diff that forgot the flags fails rather than run the repository's program.
        await assert.rejects(run.run(h.repo, ['diff', '--cached'], o), GitError);
        await run.run(h.repo, ['commit', '-q', '-m', 'ours'], o);
        await run.run(h.repo, ['log', '-1', '-p', '--no-ext-diff', '--no-textconv'], o);
        assert.equal((await run.run(h.repo, ['show', 'HEAD:a.txt'], o)).stdout, 'one\nTWO\nthree\n');
        // The other side changes the same line: a conflict, never silently "ours" through the driver.
        await run.run(h.repo, ['checkout', '-q', 'side'], o);
        write(h.repo, 'a.txt', 'one\nzwei\nthree\n');
        await run.run(h.repo, ['commit', '-q', '-am', 'theirs'], o);
        const merge = await run.run(h.repo, ['merge-tree', '--write-tree', 'main', 'side'], { ...o, okCodes: [1] });
        assert.equal(merge.code, 1);
        assert.match(merge.stdout, /CONFLICT \(content\): Merge conflict in a\.txt/);
        const merged = merge.stdout.split('\n')[0] ?? '';
        assert.match(
          (await run.run(h.repo, ['cat-file', 'blob', `${merged}:a.txt`], o)).stdout,
          /^<{7} .*\nTWO\n={7}\nzwei\n>{7} /m,
        );
        await run.run(h.repo, ['checkout', '-q', 'main'], o);
        fs.rmSync(path.join(h.repo, 'a.txt'));
        await run.run(h.repo, ['checkout', '--', 'a.txt'], o);
        assert.equal(fs.readFileSync(path.join(h.repo, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
        assert.deepEqual(h.ran(), []);
      } finally {
        if (run instanceof ConfinedGit) run.close();
      }
    });
  }

  it("a repository's core.worktree cannot send a command to another directory", async () => {
    const other = tmpDir('other');
    try {
      write(other, 'a.txt', 'not yours\n');
      git(h.repo, 'config', 'core.worktree', other);
      fs.rmSync(path.join(h.repo, 'a.txt'));
      const o = { workTree: h.repo };
      assert.match((await directGit.run(h.repo, ['status', '--porcelain'], o)).stdout, /^ D a\.txt$/m);
      await directGit.run(h.repo, ['checkout', '--', 'a.txt'], o);
      assert.equal(fs.readFileSync(path.join(h.repo, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
      assert.equal(fs.readFileSync(path.join(other, 'a.txt'), 'utf8'), 'not yours\n');
      assert.deepEqual(h.ran(), []);
    } finally {
      rmrf(other);
    }
  });
});

describe('the confined git helper', () => {
  let dir: string;
  let confinement: CommandConfinement;
  beforeEach(async () => {
    dir = tmpDir('helper');
    confinement = await CommandConfinement.probe({ mode: 'bubblewrap', home: path.join(dir, 'home'), secrets: [] });
    fs.mkdirSync(path.join(dir, 'root'));
    git(path.join(dir, 'root'), 'init', '-q');
  });
  afterEach(() => rmrf(dir));

  it('writes only the sandbox, the directories it is given and its exchange directory', async () => {
    const root = path.join(dir, 'root');
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(outside);
    const run = new ConfinedGit({ confinement, root, io: path.join(dir, 'io'), writable: [] });
    try {
      const r = await run.script(root, `touch "$O/x" 2>/dev/null; echo $?; touch inside; echo $?\n`, {
        vars: { O: outside },
      });
      assert.deepEqual(r.stdout.trim().split('\n').map(Number).map(Boolean), [true, false]);
      assert.equal(fs.existsSync(path.join(outside, 'x')), false);
      assert.equal(fs.existsSync(path.join(root, 'inside')), true);
    } finally {
      run.close();
    }
  });

  it('answers in order, reports a failing command with its exit code and stderr, and starts again after a time limit killed it', async () => {
    const root = path.join(dir, 'root');
    const run = new ConfinedGit({ confinement, root, io: path.join(dir, 'io'), writable: [] });
    try {
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, i) => run.script(root, `echo ${i}\n`).then((r) => r.stdout.trim())),
      );
      assert.deepEqual(answers, ['0', '1', '2', '3', '4']);
      await assert.rejects(
        run.run(root, ['rev-parse', '--verify', 'no-such-ref']),
        (e: unknown) => e instanceof GitError && e.code === 128 && /Needed a single revision/.test(e.stderr),
      );
      await assert.rejects(run.script(root, 'sleep 30\n', { timeoutMs: 300 }), (e: unknown) => {
        assert.ok(e instanceof GitError);
        assert.equal(e.code, 'timed out');
        return true;
      });
      assert.equal((await run.run(root, ['rev-parse', '--is-inside-work-tree'])).stdout.trim(), 'true');
    } finally {
      run.close();
    }
    await assert.rejects(run.script(root, 'true\n'), /being removed/);
  });
});
