import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { rmrf, tmpDir, write } from '../fixtures/repos.ts';
import { toolsAt } from './coding-tools.fixture.ts';

describe('read', () => {
  let dir: string;
  const { call } = toolsAt(() => dir);
  before(() => {
    dir = tmpDir('read');
    write(dir, 'five.txt', 'one\ntwo\nthree\nfour\nfive\n');
    write(dir, 'long.txt', Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n'));
    write(dir, 'wide.txt', `short\n${'x'.repeat(5000)}\n`);
    write(dir, 'crlf.txt', 'a\r\nb\r\n');
    write(dir, 'bin.dat', Buffer.from([1, 2, 0, 3]));
    write(dir, 'empty.txt', '');
    fs.writeFileSync(path.join(dir, 'big.txt'), Buffer.alloc(6 * 1024 * 1024, 'a'));
  });
  after(() => rmrf(dir));

  it('numbers the lines and says the range, the total and that the file ended', async () => {
    const r = await call('read', { path: 'five.txt' });
    assert.equal(r.ok, true, r.summary);
    assert.equal(
      r.output,
      '     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive\n\n[five.txt: lines 1–5 of 5 (end of file)]',
    );
    assert.equal(r.summary, 'read five.txt lines 1–5 of 5');
  });

  it('reads a range from offset, and tells how to read on', async () => {
    const r = await call('read', { path: 'five.txt', offset: 2, limit: 2 });
    assert.equal(r.output, '     2\ttwo\n     3\tthree\n\n[five.txt: lines 2–3 of 5; read on with offset 4]');
  });

  it('shows 2000 lines by default', async () => {
    const r = await call('read', { path: 'long.txt' });
    const lines = r.output.split('\n');
    assert.equal(lines[1999], '  2000\tline 2000');
    assert.equal(lines.at(-1), '[long.txt: lines 1–2000 of 2500; read on with offset 2001]');
    const rest = await call('read', { path: 'long.txt', offset: 2001 });
    assert.match(rest.output, /\[long\.txt: lines 2001–2500 of 2500 \(end of file\)\]$/);
  });

  it('cuts long lines and says so', async () => {
    const r = await call('read', { path: 'wide.txt' });
    assert.match(r.output, /^ {5}2\tx{2000}… \[line cut: 5000 characters\]$/m);
    assert.match(r.output, /1 long line cut at 2000 characters/);
  });

  it('shows CRLF lines without the CR and says the file uses CRLF', async () => {
    const r = await call('read', { path: 'crlf.txt' });
    assert.match(r.output, /^ {5}1\ta\n {5}2\tb\n/);
    assert.doesNotMatch(r.output, /\r/);
    assert.match(r.output, /CRLF line endings/);
  });

  it('refuses binary and oversized files, directories, missing files and an offset past the end, saying why', async () => {
    assert.match((await call('read', { path: 'bin.dat' })).summary, /^bin\.dat is a binary file \(4 bytes\)/);
    assert.match(
      (await call('read', { path: 'big.txt' })).summary,
      /^big\.txt is 6\.0 MB; read refuses files over 5\.0 MB/,
    );
    assert.match((await call('read', { path: '.' })).summary, /is a directory \(list shows what is in it\)/);
    assert.equal((await call('read', { path: 'nope.txt' })).summary, 'nope.txt does not exist');
    assert.equal(
      (await call('read', { path: 'five.txt', offset: 9 })).summary,
      'offset 9 is past the end of five.txt (5 lines)',
    );
    assert.match((await call('read', { path: 'empty.txt' })).output, /empty/);
  });

  it('refuses a path outside the root', async () => {
    const r = await call('read', { path: '../../etc/passwd' });
    assert.equal(r.ok, false);
    assert.match(r.summary, /escapes the sandbox/);
  });
});

describe('grep, glob and list', () => {
  let dir: string;
  const { call } = toolsAt(() => dir);
  before(() => {
    dir = tmpDir('search');
    write(dir, '.gitignore', 'dist/\n*.log\n');
    write(dir, 'src/a.ts', 'import x from "y";\nexport function load() {\n  return 1;\n}\n');
    write(dir, 'src/b.ts', 'export const LOAD = 2;\n');
    write(dir, 'src/deep/c.tsx', 'function load2() {}\n');
    write(dir, 'src/.gitignore', 'secret.ts\n');
    write(dir, 'src/secret.ts', 'function load() {}\n');
    write(dir, 'dist/a.js', 'function load() {}\n');
    write(dir, 'node_modules/m/index.js', 'function load() {}\n');
    write(dir, 'debug.log', 'function load() {}\n');
    write(dir, 'many.txt', Array.from({ length: 150 }, (_, i) => `hit ${i + 1}`).join('\n') + '\n');
    write(dir, 'bin.dat', Buffer.from('function load\0'));
    fs.mkdirSync(path.join(dir, '.git'));
    write(dir, '.git/config', 'function load() {}\n');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, 'src/a.ts'), old, old);
  });
  after(() => rmrf(dir));

  it('grep finds lines as path:line:text, skipping .git, node_modules, ignored and binary files', async () => {
    const r = await call('grep', { pattern: 'function\\s+load' });
    assert.equal(r.ok, true, r.summary);
    assert.deepEqual(r.output.split('\n'), [
      'src/a.ts:2:export function load() {',
      'src/deep/c.tsx:1:function load2() {}',
    ]);
    assert.equal(r.summary, '2 matches in 2 files');
  });

  it('grep takes a glob relative to the path, ignoreCase, and a single file', async () => {
    assert.deepEqual((await call('grep', { pattern: 'load', glob: '*.tsx' })).output.split('\n'), [
      'src/deep/c.tsx:1:function load2() {}',
    ]);
    assert.deepEqual((await call('grep', { pattern: 'load', path: 'src', glob: 'deep/**' })).output.split('\n'), [
      'src/deep/c.tsx:1:function load2() {}',
    ]);
    assert.equal(
      (await call('grep', { pattern: 'LOAD', path: 'src/b.ts', ignoreCase: true })).output,
      'src/b.ts:1:export const LOAD = 2;',
    );
    assert.match((await call('grep', { pattern: 'LOAD' })).output, /^src\/b\.ts:1:/);
  });

  it('grep shows context lines and separates groups', async () => {
    const r = await call('grep', { pattern: 'return|LOAD', context: 1 });
    assert.deepEqual(r.output.split('\n'), [
      'src/a.ts-2-export function load() {',
      'src/a.ts:3:  return 1;',
      'src/a.ts-4-}',
      '--',
      'src/b.ts:1:export const LOAD = 2;',
    ]);
  });

  it('grep caps the results and says how many more; files and count modes', async () => {
    const r = await call('grep', { pattern: '^hit' });
    assert.equal(r.output.split('\n').filter((l) => l.startsWith('many.txt:')).length, 100);
    assert.match(r.output, /\[50 more matches not shown/);
    assert.equal(r.summary, '150 matches in 1 file (100 shown)');
    const few = await call('grep', { pattern: '^hit', maxResults: 3 });
    assert.deepEqual(few.output.split('\n').slice(0, 3), ['many.txt:1:hit 1', 'many.txt:2:hit 2', 'many.txt:3:hit 3']);
    assert.match(few.output, /\[147 more matches not shown/);
    assert.equal((await call('grep', { pattern: 'load', outputMode: 'files' })).output, 'src/a.ts\nsrc/deep/c.tsx');
    assert.equal(
      (await call('grep', { pattern: 'o', outputMode: 'count', path: 'src' })).output,
      'src/a.ts:2\nsrc/b.ts:1\nsrc/deep/c.tsx:1',
    );
    const capped = await call('grep', { pattern: 'load', outputMode: 'files', maxResults: 1 });
    assert.match(capped.output, /^src\/a\.ts\n\[1 more file not shown/);
  });

  it('grep refuses an invalid regular expression and a path outside, saying so', async () => {
    const r = await call('grep', { pattern: 'load(' });
    assert.equal(r.ok, false);
    assert.match(r.summary, /^invalid regular expression \/load\(\/: Unterminated group$/);
    assert.match((await call('grep', { pattern: 'x', path: '..' })).summary, /escapes the sandbox/);
    const none = await call('grep', { pattern: 'nothing-like-this' });
    assert.equal(none.summary, '0 matches in 0 files');
  });

  it('glob lists matching files newest first, skipping ignored ones', async () => {
    const r = await call('glob', { pattern: '**/*.ts' });
    assert.deepEqual(r.output.split('\n'), ['src/b.ts', 'src/a.ts']);
    assert.deepEqual((await call('glob', { pattern: '*.{ts,tsx}', path: 'src/deep' })).output, 'src/deep/c.tsx');
    assert.match((await call('glob', { pattern: '*.rs' })).output, /^no file under \. matches \*\.rs$/);
  });

  it('glob caps at 200 and says how many more', async () => {
    for (let i = 0; i < 205; i++) write(dir, `gen/f${i}.gen`, '');
    try {
      const r = await call('glob', { pattern: '*.gen' });
      assert.equal(r.output.split('\n').filter((l) => l.startsWith('gen/')).length, 200);
      assert.match(r.output, /\[5 more not shown/);
    } finally {
      fs.rmSync(path.join(dir, 'gen'), { recursive: true });
    }
  });

  it('list shows a tree to a depth, directories marked, entry counts at the limit', async () => {
    const r = await call('list', {});
    assert.deepEqual(r.output.split('\n'), [
      './',
      '  .gitignore',
      '  bin.dat',
      '  many.txt',
      '  src/',
      '    .gitignore',
      '    a.ts',
      '    b.ts',
      '    deep/ (1 entry)',
    ]);
    assert.deepEqual((await call('list', { path: 'src', depth: 1 })).output.split('\n'), [
      'src/',
      '  .gitignore',
      '  a.ts',
      '  b.ts',
      '  deep/ (1 entry)',
    ]);
    assert.match((await call('list', { path: 'src/a.ts' })).summary, /is a file, not a directory/);
  });

  it('list walks a directory named directly even when it is ignored', async () => {
    assert.deepEqual((await call('list', { path: 'dist' })).output.split('\n'), ['dist/', '  a.js']);
  });
});
