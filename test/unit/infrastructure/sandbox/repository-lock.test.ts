import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withRepositoryLock } from '../../../../src/infrastructure/sandbox/repository-lock.ts';
import { git, makeRepo, rmrf, tmpDir } from '../fixtures/repos.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const managerModule = path.resolve(here, '../../../../src/infrastructure/index.ts');

describe('withRepositoryLock', () => {
  let repo: string;
  let dir: string;
  let lock: string;

  beforeEach(() => {
    repo = makeRepo();
    dir = tmpDir('lock');
    lock = path.join(repo, '.git', 'cleveragents-worktrees.lock');
  });
  afterEach(() => rmrf(repo, dir));

  it('runs one holder at a time, and leaves no lock behind, also when the work fails', async () => {
    let active = 0;
    let most = 0;
    const work = async (): Promise<void> => {
      active++;
      most = Math.max(most, active);
      assert.equal(fs.readFileSync(lock, 'utf8'), `${process.pid} ${hostname()}\n`, 'the file names its owner');
      await new Promise((r) => setTimeout(r, 20));
      active--;
    };
    await Promise.all([1, 2, 3].map(() => withRepositoryLock(repo, work)));
    assert.equal(most, 1);
    await assert.rejects(
      withRepositoryLock(repo, () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(fs.existsSync(lock), false);
  });

  it("takes over the lock of a process of this host that has ended, and waits for a live one's", async () => {
    const ended = spawnSync(process.execPath, ['-e', '0']).pid;
    fs.writeFileSync(lock, `${ended} ${hostname()}\n`);
    assert.equal(await withRepositoryLock(repo, () => Promise.resolve('ran')), 'ran');

    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      fs.writeFileSync(lock, `${live.pid} ${hostname()}\n`);
      await assert.rejects(
        withRepositoryLock(repo, () => Promise.resolve(), { waitMs: 150 }),
        (e: Error) => {
          assert.match(e.message, new RegExp(`is busy: another CleverAgents process \\(pid ${live.pid} on `));
          assert.ok(e.message.includes(lock), 'names the file');
          return true;
        },
      );
      assert.equal(fs.readFileSync(lock, 'utf8'), `${live.pid} ${hostname()}\n`, "a live owner's lock stays");
    } finally {
      live.kill();
    }
  });

  it('lets concurrent processes each add a worktree of one repository (git alone races on them)', async () => {
    const script = `
      const { GitSandboxManager } = await import(${JSON.stringify(managerModule)});
      const [repo, root, plan] = process.argv.slice(1);
      const m = new GitSandboxManager({ root });
      await m.create(plan, { name: 'local/approvals', type: 'git-checkout', path: repo, branch: 'main' });`;
    const outcomes = await Promise.all(
      Array.from(
        { length: 12 },
        (_, i) =>
          new Promise<{ code: number | null; stderr: string }>((resolve) => {
            const child = spawn(
              process.execPath,
              ['--input-type=module', '-e', script, repo, path.join(dir, `sb${i}`), `P${i}`],
              { stdio: ['ignore', 'ignore', 'pipe'] },
            );
            let stderr = '';
            child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
            child.on('close', (code) => resolve({ code, stderr }));
          }),
      ),
    );
    for (const o of outcomes) assert.equal(o.code, 0, o.stderr);
    const worktrees = git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm) ?? [];
    assert.equal(worktrees.length, 13, 'the repository and the twelve sandboxes');
    assert.equal(fs.existsSync(lock), false);
  });
});
