/**
 * `kill -9` during a real apply of ~3,000 changed files, at many points (issue #35, point 7): the
 * apply runs in a child process (test/support/apply-child.ts) killed after a series of delays from
 * its start up to past its end; after each kill a fresh manager recovers, and the branch is exactly
 * the old tip or the applied commit, the index and work tree match it (git status clean), no lock
 * is left, and applying again succeeds — with the applied commit when there already was one.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { GitSandboxManager } from '../../src/infrastructure/index.ts';
import type { SandboxInfo } from '../../src/application/index.ts';
import { initRepo } from '../support/git.ts';
import { eventually } from '../support/eventually.ts';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'apply-child.ts');
const ROOT = mkdtempSync(join(tmpdir(), 'agents-apply-crash-'));
const FILES = 3000;
const MESSAGE = 'plan crash: change every file';

/** Whether any process of the group `pid` leads is still running. */
function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs the child; kills it `delayMs` after it says `start` (never when undefined). Its output. */
function applyInChild(
  root: string,
  sandbox: SandboxInfo,
  delayMs?: number,
): Promise<{ killed: boolean; out: string; ms: number }> {
  return new Promise((resolve, reject) => {
    // A process group of its own: the git commands the killed child had started run on to their
    // end (as after a real kill -9), and the round waits for them before recovering.
    const child = spawn(process.execPath, [CHILD, JSON.stringify({ root, sandbox, message: MESSAGE })], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let err = '';
    let started = 0;
    let killed = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      if (!started && out.startsWith('start\n')) {
        started = performance.now();
        if (delayMs !== undefined)
          setTimeout(() => {
            killed = child.kill('SIGKILL') && child.exitCode === null;
          }, delayMs);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.on('error', reject);
    child.on('close', (code) => {
      if (!killed && code !== 0) return reject(new Error(`apply child failed (${code}): ${err}`));
      const ms = performance.now() - started;
      eventually(
        async () => (groupAlive(child.pid) ? undefined : true),
        10_000,
        "the killed apply's git commands",
      ).then(() => resolve({ killed, out, ms }), reject);
    });
  });
}

describe('kill -9 during a 3,000-file apply', () => {
  let git: (...args: string[]) => string;
  let repo: string;
  let root: string;
  let sandbox: SandboxInfo;
  let old: string;

  before(async () => {
    repo = join(ROOT, 'repo');
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`d${i % 30}/f${i}.txt`] = `file ${i}\n`;
    git = initRepo(repo, files);
    old = git('rev-parse', 'HEAD');
    root = join(ROOT, 'sandboxes');
    const manager = new GitSandboxManager({ root });
    sandbox = await manager.create('crash', { name: 'local/app', type: 'git-checkout', path: repo });
    // Every file changed, some deleted, some added (in a new directory too).
    for (let i = 0; i < FILES; i++) {
      const f = join(sandbox.root, `d${i % 30}`, `f${i}.txt`);
      if (i % 100 === 7) rmSync(f);
      else writeFileSync(f, `file ${i}, changed by the plan\n`);
    }
    mkdirSync(join(sandbox.root, 'added'));
    for (let i = 0; i < 40; i++) writeFileSync(join(sandbox.root, 'added', `n${i}.txt`), `new ${i}\n`);
    await manager.checkpoint(sandbox, 'work');
  });
  after(() => rmSync(ROOT, { recursive: true, force: true }));

  /** Back to the old tip, for the next round. */
  const reset = (): void => {
    git('reset', '-q', '--hard', old);
    git('clean', '-q', '-fd');
  };

  it('leaves the branch old or new, the work tree matching, and applies again', async () => {
    // One apply to the end: how long it takes here (and that it works).
    const full = await applyInChild(root, sandbox);
    const done = JSON.parse(full.out.split('\n')[1] ?? '{}') as { ok: boolean; commit?: string; files: string[] };
    assert.equal(done.ok, true, full.out);
    assert.equal(done.files.length, FILES + 40);
    reset();

    const seen = { old: 0, new: 0 };
    const rounds = 14;
    for (let k = 0; k < rounds; k++) {
      const delay = Math.round((full.ms * 1.1 * k) / (rounds - 1));
      const run = await applyInChild(root, sandbox, delay);
      const recovered = await new GitSandboxManager({ root }).recoverApplies();
      for (const r of recovered) assert.notEqual(r.outcome, 'failed', r.detail);
      const tip = git('rev-parse', 'main');
      const at = tip === old ? 'old' : 'new';
      seen[at]++;
      if (at === 'new') {
        assert.equal(git('rev-parse', 'main^'), old, `round ${k}: one commit on the old tip`);
        assert.equal(git('log', '-1', '--format=%B', 'main'), MESSAGE);
      }
      assert.equal(
        git('status', '--porcelain', '--untracked-files=all'),
        '',
        `round ${k} (${delay} ms, killed: ${run.killed}, ${at})`,
      );
      assert.equal(existsSync(join(repo, '.git', 'index.lock')), false);
      assert.equal(existsSync(join(repo, '.git', 'refs', 'heads', 'main.lock')), false);
      assert.equal(git('diff', '--name-only', 'HEAD'), '');

      const again = await new GitSandboxManager({ root }).apply(sandbox, MESSAGE);
      assert.equal(again.ok, true, JSON.stringify(again).slice(0, 300));
      assert.ok(again.ok && again.commit);
      if (at === 'new') assert.equal(again.ok && again.commit, tip, 'the commit of the interrupted apply');
      assert.equal(git('status', '--porcelain', '--untracked-files=all'), '');
      assert.equal(git('rev-parse', 'main^'), old);
      reset();
    }
    // The delays reached both sides of the commit point.
    assert.ok(seen.old > 0 && seen.new > 0, JSON.stringify(seen));
  });
});
