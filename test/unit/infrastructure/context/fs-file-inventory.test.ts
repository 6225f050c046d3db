/**
 * FsFileInventory on real trees: `.gitignore` in a git checkout and in a plain directory, `.git/`
 * never listed, binary and symlinked files, git recency, and the cache — a hit when nothing
 * changed, a new listing when a file is added or removed or a `.gitignore` changes, and what an
 * in-place edit does (listing kept, restat fresh). The trees' timestamps are set into the past
 * first, so that a change made a millisecond later is visible whatever the file system's clock
 * granularity.
 */
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { FsFileInventory } from '../../../../src/infrastructure/index.ts';
import { initRepo } from '../../../support/git.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'ca-inventory-'));
  dirs.push(d);
  return d;
}
function write(root: string, files: Record<string, string | Buffer>): void {
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), content);
  }
}
/** Every file and directory under root (.git included) a day old. */
function age(root: string): void {
  const old = new Date(Date.now() - 86_400_000);
  const visit = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) visit(p);
      if (!e.isSymbolicLink()) utimesSync(p, old, old);
    }
    utimesSync(d, old, old);
  };
  visit(root);
}
const paths = (l: { files: readonly { path: string }[] }): string[] => l.files.map((f) => f.path);

describe('FsFileInventory in a git checkout', () => {
  it('lists tracked and untracked files, sorted, without what .gitignore ignores and without .git/', async () => {
    const repo = join(temp(), 'r');
    initRepo(repo, { '.gitignore': 'dist/\n*.log\n', 'src/a.ts': 'export const a = 1;\n', 'README.md': '# r\n' });
    write(repo, { 'dist/out.js': 'x', 'debug.log': 'x', 'src/new.ts': 'new\n', 'src/sub/deep.ts': 'deep' });
    const l = await new FsFileInventory().list(repo);
    assert.equal(l.source, 'git');
    assert.equal(l.fromCache, false);
    assert.deepEqual(paths(l), ['.gitignore', 'README.md', 'src/a.ts', 'src/new.ts', 'src/sub/deep.ts']);
    assert.deepEqual(l.files.find((f) => f.path === 'src/a.ts')?.bytes, Buffer.byteLength('export const a = 1;\n'));
  });

  it('answers from the cache while nothing changed, and lists again when a file is added or removed', async () => {
    const repo = join(temp(), 'r');
    initRepo(repo, { 'src/a.ts': 'a', 'src/b.ts': 'b', 'docs/x.md': 'x' });
    age(repo);
    const inv = new FsFileInventory();
    const first = await inv.list(repo);
    const again = await inv.list(repo);
    assert.equal(again.fromCache, true);
    assert.equal(again.files, first.files, 'the same listing object while it is valid');

    write(repo, { 'src/c.ts': 'c' });
    const added = await inv.list(repo);
    assert.equal(added.fromCache, false);
    assert.deepEqual(paths(added), ['docs/x.md', 'src/a.ts', 'src/b.ts', 'src/c.ts']);

    age(repo);
    await inv.list(repo);
    unlinkSync(join(repo, 'docs/x.md'));
    const removed = await inv.list(repo);
    assert.equal(removed.fromCache, false);
    assert.deepEqual(paths(removed), ['src/a.ts', 'src/b.ts', 'src/c.ts']);
  });

  it('lists again when a .gitignore or the index changes', async () => {
    const repo = join(temp(), 'r');
    const git = initRepo(repo, { '.gitignore': '*.tmp\n', 'a.ts': 'a' });
    write(repo, { 'keep.tmp': 'x' });
    git('add', '-f', 'keep.tmp');
    git('commit', '-qm', 'keep');
    age(repo);
    const inv = new FsFileInventory();
    assert.deepEqual(paths(await inv.list(repo)), ['.gitignore', 'a.ts', 'keep.tmp'], 'a tracked file stays listed');
    write(repo, { 'sub/other.tmp': 'y' });
    assert.deepEqual(paths(await inv.list(repo)), ['.gitignore', 'a.ts', 'keep.tmp']);
    age(repo);
    await inv.list(repo);
    writeFileSync(join(repo, '.gitignore'), 'nothing\n'); // in place: no directory changes
    const l = await inv.list(repo);
    assert.equal(l.fromCache, false);
    assert.deepEqual(paths(l), ['.gitignore', 'a.ts', 'keep.tmp', 'sub/other.tmp']);
    age(repo);
    await inv.list(repo);
    git('rm', '-q', '--cached', 'keep.tmp');
    assert.equal((await inv.list(repo)).fromCache, false, 'the index changed');
  });

  it('keeps the listing on an in-place edit, and restat gives (and records) the new size', async () => {
    const repo = join(temp(), 'r');
    initRepo(repo, { 'a.ts': 'short' });
    age(repo);
    const inv = new FsFileInventory();
    await inv.list(repo);
    writeFileSync(join(repo, 'a.ts'), 'a good deal longer');
    const l = await inv.list(repo);
    assert.equal(l.fromCache, true, 'an in-place edit changes no directory: the documented miss');
    assert.equal(l.files[0]?.bytes, 5);
    const [fresh, gone] = await inv.restat(repo, ['a.ts', 'missing.ts']);
    assert.equal(fresh?.bytes, 18);
    assert.equal(gone, undefined);
    assert.equal((await inv.list(repo)).files[0]?.bytes, 18, 'the cached listing took the new size');
  });

  it('gives the paths the last commits touched, newest first, relative to the root', async () => {
    const repo = join(temp(), 'r');
    const git = initRepo(repo, { 'sub/a.ts': 'a', 'sub/b.ts': 'b', 'top.ts': 't' });
    writeFileSync(join(repo, 'sub/b.ts'), 'b2');
    git('commit', '-qam', 'two');
    const inv = new FsFileInventory();
    const r = await inv.recency(join(repo, 'sub'));
    assert.equal(r?.commits, 2);
    assert.deepEqual([...(r?.paths ?? [])].sort(), [
      ['a.ts', 1],
      ['b.ts', 0],
    ]);
    assert.equal(r?.head, git('rev-parse', 'HEAD'));
    assert.deepEqual(paths(await inv.list(join(repo, 'sub'))), ['a.ts', 'b.ts']);
  });
});

describe('FsFileInventory in a plain directory', () => {
  it('honours nested .gitignore files (a deeper negation wins), never enters .git or ignored directories', async () => {
    const root = temp();
    write(root, {
      '.gitignore': '*.log\nbuild/\n',
      'a.txt': 'a',
      'x.log': 'x',
      'build/out.txt': 'o',
      'pkg/.gitignore': '!keep.log\nsecret.txt\n',
      'pkg/keep.log': 'k',
      'pkg/drop.log': 'd',
      'pkg/secret.txt': 's',
      'pkg/sub/secret.txt': 's',
      'pkg/ok.txt': 'ok',
      '.git/config': 'not a repository, but never listed',
      '...': 'an odd but legal name',
    });
    const inv = new FsFileInventory();
    const l = await inv.list(root);
    assert.equal(l.source, 'walk');
    assert.deepEqual(paths(l), ['...', '.gitignore', 'a.txt', 'pkg/.gitignore', 'pkg/keep.log', 'pkg/ok.txt']);
    assert.equal(await inv.recency(root), undefined);
  });

  it('uses the cache until a directory or .gitignore changes', async () => {
    const root = temp();
    write(root, { '.gitignore': 'tmp/\n', 'a/b/c.txt': 'c', 'tmp/x': 'x' });
    age(root);
    const inv = new FsFileInventory();
    await inv.list(root);
    assert.equal((await inv.list(root)).fromCache, true);
    write(root, { 'a/b/d.txt': 'd' });
    const l = await inv.list(root);
    assert.equal(l.fromCache, false);
    assert.deepEqual(paths(l), ['.gitignore', 'a/b/c.txt', 'a/b/d.txt']);
    age(root);
    await inv.list(root);
    writeFileSync(join(root, '.gitignore'), '');
    assert.deepEqual(paths(await inv.list(root)), ['.gitignore', 'a/b/c.txt', 'a/b/d.txt', 'tmp/x']);
  });

  it('refuses a root that does not exist with UNAVAILABLE', async () => {
    await assert.rejects(
      new FsFileInventory().list(join(temp(), 'missing')),
      (e: unknown) => e instanceof AppError && e.reason === 'UNAVAILABLE' && /is not a directory/.test(e.message),
    );
  });
});

describe('FsFileInventory.read and globFilter', () => {
  it('reads text up to maxBytes, tells binary by a NUL byte, and does not follow symlinks', async () => {
    const root = temp();
    write(root, { 'a.txt': 'hello world', 'b.dat': Buffer.from([104, 0, 105]) });
    symlinkSync('/etc/hostname', join(root, 'link'));
    const inv = new FsFileInventory();
    assert.deepEqual(
      { ...(await inv.read(root, 'a.txt', 5)), mtimeMs: 0 },
      { kind: 'text', text: 'hello', bytes: 11, mtimeMs: 0, truncated: true },
    );
    assert.equal((await inv.read(root, 'b.dat', 100)).kind, 'binary');
    assert.deepEqual(await inv.read(root, 'link', 100), { kind: 'unreadable', reason: 'a symbolic link' });
    assert.deepEqual(await inv.read(root, '../x', 100), {
      kind: 'unreadable',
      reason: 'not a relative path inside the root',
    });
    assert.deepEqual(paths(await inv.list(root)), ['a.txt', 'b.dat'], 'the symlink is not listed');
  });

  it('tells included, not-included and excluded apart, and refuses a glob that cannot compile', () => {
    const inv = new FsFileInventory();
    const v = inv.globFilter(['src/**', '*.md'], ['**/*.test.ts']);
    assert.deepEqual(['src/a.ts', 'docs/x.md', 'lib/a.ts', 'src/a.test.ts'].map(v), [
      'included',
      'included',
      'not-included',
      'excluded',
    ]);
    assert.throws(
      () => inv.globFilter(['[z-a]'], []),
      (e: unknown) => e instanceof AppError && e.reason === 'INVALID_PARAMS' && e.fields[0]?.field === 'include.0',
    );
  });
});
