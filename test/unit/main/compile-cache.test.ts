import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { constants } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { compileCacheDir, startCompileCache } from '../../../src/main/compile-cache.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'ca-compile-cache-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

const uid = process.getuid?.();
/** A fake module.enableCompileCache that records the directory it was given. */
function recorder(status: number = constants.compileCacheStatus.ENABLED) {
  const dirs: string[] = [];
  const enable = (dir: string) => {
    dirs.push(dir);
    return status === constants.compileCacheStatus.FAILED
      ? { status, message: 'EACCES: permission denied' }
      : { status, directory: dir };
  };
  return { dirs, enable };
}

describe('compileCacheDir', () => {
  it('is cleveragents under an absolute XDG_CACHE_HOME, else under ~/.cache', () => {
    assert.equal(compileCacheDir({ XDG_CACHE_HOME: '/x/cache' }, '/home/u'), '/x/cache/cleveragents');
    assert.equal(compileCacheDir({}, '/home/u'), '/home/u/.cache/cleveragents');
  });

  it('ignores a relative XDG_CACHE_HOME, and has no answer without a home', () => {
    assert.equal(compileCacheDir({ XDG_CACHE_HOME: 'cache' }, '/home/u'), '/home/u/.cache/cleveragents');
    assert.equal(compileCacheDir({}, undefined), undefined);
    assert.equal(compileCacheDir({}, ''), undefined);
  });
});

describe('startCompileCache', () => {
  it('creates a missing directory, private to the user, and enables the cache there', () => {
    const xdg = join(ROOT, 'missing', 'deeper');
    const r = recorder();
    const out = startCompileCache({ XDG_CACHE_HOME: xdg }, { enable: r.enable, uid });
    const dir = join(xdg, 'cleveragents');
    assert.deepEqual(out, { status: 'enabled', directory: dir });
    assert.deepEqual(r.dirs, [dir]);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });

  it('leaves the cache off, and creates nothing, when NODE_DISABLE_COMPILE_CACHE is set', () => {
    const xdg = join(ROOT, 'disabled');
    const r = recorder();
    const out = startCompileCache({ XDG_CACHE_HOME: xdg, NODE_DISABLE_COMPILE_CACHE: '1' }, { enable: r.enable, uid });
    assert.equal(out.status, 'skipped');
    assert.deepEqual(r.dirs, []);
    assert.equal(existsSync(xdg), false);
  });

  it('leaves a NODE_COMPILE_CACHE directory to Node', () => {
    const r = recorder();
    const out = startCompileCache({ NODE_COMPILE_CACHE: join(ROOT, 'theirs') }, { enable: r.enable, uid });
    assert.equal(out.status, 'skipped');
    assert.deepEqual(r.dirs, []);
  });

  it('runs uncached, without throwing, when the directory cannot be created', () => {
    const file = join(ROOT, 'a-file');
    writeFileSync(file, '');
    const r = recorder();
    const out = startCompileCache({ XDG_CACHE_HOME: file }, { enable: r.enable, uid });
    assert.equal(out.status, 'failed');
    assert.match(out.status === 'failed' ? out.reason : '', /ENOTDIR|EEXIST/);
    assert.deepEqual(r.dirs, []);
  });

  it('runs uncached when Node cannot use the directory (read-only)', () => {
    const xdg = join(ROOT, 'read-only');
    mkdirSync(join(xdg, 'cleveragents'), { recursive: true, mode: 0o700 });
    chmodSync(join(xdg, 'cleveragents'), 0o500);
    const r = recorder(constants.compileCacheStatus.FAILED);
    const out = startCompileCache({ XDG_CACHE_HOME: xdg }, { enable: r.enable, uid });
    assert.deepEqual(out, { status: 'failed', reason: 'EACCES: permission denied' });
  });

  it(
    'refuses a directory other users can write, or that is a symbolic link',
    { skip: uid === undefined && 'no user ids here' },
    () => {
      const shared = join(ROOT, 'shared');
      mkdirSync(join(shared, 'cleveragents'), { recursive: true });
      chmodSync(join(shared, 'cleveragents'), 0o777);
      const r = recorder();
      const out = startCompileCache({ XDG_CACHE_HOME: shared }, { enable: r.enable, uid });
      assert.deepEqual(out, {
        status: 'skipped',
        reason: `${join(shared, 'cleveragents')} is writable by other users`,
      });
      const linked = join(ROOT, 'linked');
      mkdirSync(linked);
      symlinkSync(join(shared, 'cleveragents'), join(linked, 'cleveragents'));
      assert.equal(startCompileCache({ XDG_CACHE_HOME: linked }, { enable: r.enable, uid }).status, 'skipped');
      assert.deepEqual(r.dirs, []);
    },
  );

  it("refuses another user's directory", { skip: uid === undefined && 'no user ids here' }, () => {
    const xdg = join(ROOT, 'foreign');
    mkdirSync(join(xdg, 'cleveragents'), { recursive: true, mode: 0o700 });
    const r = recorder();
    const out = startCompileCache({ XDG_CACHE_HOME: xdg }, { enable: r.enable, uid: (uid ?? 0) + 1 });
    assert.deepEqual(out, { status: 'skipped', reason: `${join(xdg, 'cleveragents')} belongs to another user` });
  });

  it('does nothing on a Node without a compile cache', () => {
    const xdg = join(ROOT, 'old-node');
    assert.equal(startCompileCache({ XDG_CACHE_HOME: xdg }, { enable: undefined, uid }).status, 'skipped');
    assert.equal(existsSync(xdg), false);
  });
});
