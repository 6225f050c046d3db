/**
 * The built CLI on a Node older than `engines.node` (>=22.12): `agents …` and `npm start` end at
 * once with exit code 1 and one line naming the Node needed and the one found, not a stack trace
 * from a dependency. Runs an older Node found on this machine (CA_TEST_OLD_NODE, /usr/local/bin/node,
 * /usr/bin/node); skipped, saying so, when there is none. Also: the compile cache never fails a
 * command, wherever XDG_CACHE_HOME points.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BUNDLE, repoPath } from '../support/paths.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-node-version-e2e-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** A Node binary older than 22.12 and its version, or undefined. */
function olderNode(): { path: string; version: string } | undefined {
  const candidates = [process.env['CA_TEST_OLD_NODE'], '/usr/local/bin/node', '/usr/bin/node'];
  for (const path of candidates) {
    if (!path || !existsSync(path)) continue;
    const r = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const m = /^v(\d+)\.(\d+)\.\d+/.exec(r.stdout.trim());
    if (m && (Number(m[1]) < 22 || (Number(m[1]) === 22 && Number(m[2]) < 12)))
      return { path, version: r.stdout.trim() };
  }
  return undefined;
}

const old = olderNode();

describe('on a Node older than 22.12', { skip: old ? false : 'no Node older than 22.12 on this machine' }, () => {
  const line = (version: string): string =>
    `agents: needs Node.js 22.12 or newer (24 recommended); this is ${version} — see README "Requirements"\n`;

  for (const [what, args] of [
    ['agents health', [BUNDLE, 'health']],
    ['agents --version', [BUNDLE, '--version']],
    ['npm start (agents demo)', [BUNDLE, 'demo']],
    ["tsc's unbundled bin", [repoPath('dist/src/main/bin.js'), 'task', 'list']],
  ] as const)
    it(`refuses ${what} in one line, exit code 1`, () => {
      const dataDir = join(ROOT, 'data');
      const r = spawnSync(old!.path, [...args, '--data-dir', dataDir], {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, XDG_CONFIG_HOME: join(ROOT, 'config'), XDG_CACHE_HOME: join(ROOT, 'cache') },
      });
      assert.equal(r.status, 1);
      assert.equal(r.stderr, line(old!.version));
      assert.equal(r.stdout, '');
      // Refused before anything else ran: no data directory, no cache.
      assert.equal(existsSync(dataDir), false);
      assert.equal(existsSync(join(ROOT, 'cache')), false);
    });
});

describe('the compile cache', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [BUNDLE, ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, XDG_CONFIG_HOME: join(ROOT, 'config'), NODE_COMPILE_CACHE: '', ...env },
    });

  it('lives in $XDG_CACHE_HOME/cleveragents, created private to the user', () => {
    const cache = join(ROOT, 'fresh-cache');
    const r = run(['health', '--data-dir', join(ROOT, 'data-fresh'), '--format', 'plain'], { XDG_CACHE_HOME: cache });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /status: ok/);
    assert.equal(statSync(join(cache, 'cleveragents')).mode & 0o777, 0o700);
  });

  it('never fails a command when its directory cannot be made', () => {
    const notADir = join(ROOT, 'not-a-dir');
    writeFileSync(notADir, '');
    for (const args of [['--version'], ['health', '--data-dir', join(ROOT, 'data-nodir'), '--format', 'plain']]) {
      const r = run(args, { XDG_CACHE_HOME: notADir });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
    }
  });

  it('is not used with NODE_DISABLE_COMPILE_CACHE', () => {
    const cache = join(ROOT, 'disabled-cache');
    const r = run(['--version'], { XDG_CACHE_HOME: cache, NODE_DISABLE_COMPILE_CACHE: '1' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(existsSync(cache), false);
  });
});
