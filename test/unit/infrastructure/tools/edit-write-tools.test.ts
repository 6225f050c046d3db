import { after, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { read, rmrf, tmpDir, write } from '../fixtures/repos.ts';
import { toolsAt } from './coding-tools.fixture.ts';

const SOURCE = [
  'export function total(items) {',
  '  let sum = 0;',
  '  for (const item of items) {',
  '    sum += item.price;',
  '  }',
  '  return sum;',
  '}',
  '',
  'export const TAX = 1;',
  'export const FEE = 1;',
  '',
].join('\n');

describe('edit', () => {
  let dir: string;
  const { call } = toolsAt(() => dir);
  beforeEach(() => {
    if (dir) rmrf(dir);
    dir = tmpDir('edit');
    write(dir, 'src/cart.js', SOURCE);
  });
  after(() => rmrf(dir));

  it('replaces text that occurs once and answers with the diff', async () => {
    const r = await call('edit', {
      path: 'src/cart.js',
      edits: [{ oldText: '    sum += item.price;', newText: '    sum += item.price * item.count;' }],
    });
    assert.equal(r.ok, true, r.summary);
    assert.equal(r.summary, 'edited src/cart.js: 1 edit, +1 −1');
    assert.deepEqual(r.filesTouched, ['src/cart.js']);
    assert.equal(read(dir, 'src/cart.js'), SOURCE.replace('item.price;', 'item.price * item.count;'));
    assert.match(r.output, /^--- a\/src\/cart\.js\n\+\+\+ b\/src\/cart\.js\n@@ -1,7 \+1,7 @@\n/);
    assert.match(r.output, /\n- {4}sum \+= item\.price;\n\+ {4}sum \+= item\.price \* item\.count;\n/);
  });

  it('applies several edits in order, each to the result of the one before', async () => {
    const r = await call('edit', {
      path: 'src/cart.js',
      edits: [
        { oldText: 'let sum = 0;', newText: 'let subtotal = 0;' },
        { oldText: 'subtotal = 0;\n  for', newText: 'subtotal = 0; // running\n  for' },
        { oldText: 'sum', newText: 'subtotal', replaceAll: true },
      ],
    });
    assert.equal(r.ok, true, r.summary);
    assert.equal(r.summary, 'edited src/cart.js: 3 edits, 4 replacements, +3 −3');
    const now = read(dir, 'src/cart.js');
    assert.match(now, /let subtotal = 0; \/\/ running\n/);
    assert.match(now, /subtotal \+= item\.price;/);
    assert.match(now, /return subtotal;/);
  });

  it('refuses text that occurs more than once, saying how often and where; nothing written', async () => {
    const r = await call('edit', { path: 'src/cart.js', edits: [{ oldText: '= 1;', newText: '= 2;' }] });
    assert.equal(r.ok, false);
    assert.equal(
      r.summary,
      'the edit: oldText occurs 2 times in src/cart.js, at lines 9, 10; include more of the surrounding text so it matches once, or set replaceAll; nothing was written',
    );
    assert.equal(read(dir, 'src/cart.js'), SOURCE);
    const all = await call('edit', {
      path: 'src/cart.js',
      edits: [{ oldText: '= 1;', newText: '= 2;', replaceAll: true }],
    });
    assert.equal(all.summary, 'edited src/cart.js: 1 edit, 2 replacements, +2 −2');
  });

  it('for text not found, shows the closest region with line numbers; nothing written', async () => {
    const r = await call('edit', {
      path: 'src/cart.js',
      edits: [{ oldText: '  for (const it of items) {\n    sum += it.price;\n  }', newText: 'x' }],
    });
    assert.equal(r.ok, false);
    assert.equal(r.summary, 'the edit: oldText does not occur in src/cart.js; nothing was written');
    const lines = r.output.split('\n');
    assert.match(lines[0] as string, /^The closest text in src\/cart\.js: lines 3–5, \d+% similar:$/);
    assert.deepEqual(lines.slice(1, 4), [
      '     3\t  for (const item of items) {',
      '     4\t    sum += item.price;',
      '     5\t  }',
    ]);
    assert.match(r.output, /Copy oldText exactly/);
    assert.equal(read(dir, 'src/cart.js'), SOURCE);
  });

  it('says when the only difference is whitespace', async () => {
    const r = await call('edit', {
      path: 'src/cart.js',
      edits: [{ oldText: 'let sum = 0;\nfor (const item of items) {', newText: 'x' }],
    });
    assert.match(r.output, /lines 2–3/);
    assert.match(r.output, /differs from oldText only in indentation or other whitespace/);
  });

  it('is all or nothing: a later edit that fails leaves the file untouched', async () => {
    const r = await call('edit', {
      path: 'src/cart.js',
      edits: [
        { oldText: 'let sum = 0;', newText: 'let sum = 100;' },
        { oldText: 'no such text', newText: 'y' },
      ],
    });
    assert.equal(r.ok, false);
    assert.match(
      r.summary,
      /^edit 2 of 2: oldText does not occur in src\/cart\.js \(the file as the earlier edits of this call left it\); nothing was written$/,
    );
    assert.equal(read(dir, 'src/cart.js'), SOURCE);
  });

  it('keeps CRLF line endings, matching oldText given with LF', async () => {
    write(dir, 'win.txt', 'alpha\r\nbeta\r\ngamma\r\n');
    const r = await call('edit', {
      path: 'win.txt',
      edits: [{ oldText: 'alpha\nbeta', newText: 'alpha\nBETA\nextra' }],
    });
    assert.equal(r.ok, true, r.summary);
    assert.equal(read(dir, 'win.txt'), 'alpha\r\nBETA\r\nextra\r\ngamma\r\n');
  });

  it('keeps a byte-order mark', async () => {
    write(dir, 'bom.txt', '\uFEFFkey=1\n');
    await call('edit', { path: 'bom.txt', edits: [{ oldText: 'key=1', newText: 'key=2' }] });
    assert.equal(read(dir, 'bom.txt'), '\uFEFFkey=2\n');
  });

  it('refuses bad edits clearly: empty or unchanged oldText, too many edits, a missing file, a path outside', async () => {
    const bad = async (args: Record<string, unknown>): Promise<string> => (await call('edit', args)).summary;
    assert.match(await bad({ path: 'src/cart.js', edits: [{ oldText: 'sum', newText: 'sum' }] }), /changes nothing/);
    assert.match(await bad({ path: 'src/cart.js', edits: [] }), /edits must be an array of 1 to 50 edits/);
    const many = Array.from({ length: 51 }, () => ({ oldText: 'a', newText: 'b' }));
    assert.match(await bad({ path: 'src/cart.js', edits: many }), /1 to 50/);
    assert.match(
      await bad({ path: 'src/cart.js', edits: [{ oldText: 'sum' }] }),
      /edits\[0\] must have oldText and newText/,
    );
    assert.equal(
      await bad({ path: 'new.js', edits: [{ oldText: 'a', newText: 'b' }] }),
      'new.js does not exist (write creates a file)',
    );
    assert.match(await bad({ path: '../x.js', edits: [{ oldText: 'a', newText: 'b' }] }), /escapes the sandbox/);
    assert.match(await bad({ path: '.git/config', edits: [{ oldText: 'a', newText: 'b' }] }), /inside \.git/);
    assert.equal(read(dir, 'src/cart.js'), SOURCE);
  });
});

describe('write', () => {
  let dir: string;
  const { call } = toolsAt(() => dir);
  beforeEach(() => {
    if (dir) rmrf(dir);
    dir = tmpDir('write');
  });
  after(() => rmrf(dir));

  it('creates a file and its parents, then overwrites it, saying which and how many bytes', async () => {
    const created = await call('write', { path: 'a/b/new.txt', content: 'héllo\n' });
    assert.equal(created.summary, 'created a/b/new.txt (7 bytes)');
    assert.deepEqual(created.filesTouched, ['a/b/new.txt']);
    const again = await call('write', { path: 'a/b/new.txt', content: 'bye\n' });
    assert.equal(again.summary, 'overwrote a/b/new.txt (4 bytes; was 7 bytes)');
    assert.equal(read(dir, 'a/b/new.txt'), 'bye\n');
    const same = await call('write', { path: 'a/b/new.txt', content: 'bye\n' });
    assert.equal(same.summary, 'a/b/new.txt unchanged (same content)');
    assert.deepEqual(same.filesTouched, []);
  });

  it('refuses paths outside the root, through a symlink, into .git, and onto a directory', async () => {
    const outside = tmpDir('outside');
    try {
      fs.symlinkSync(outside, path.join(dir, 'link'));
      assert.match((await call('write', { path: '../escape.txt', content: 'x' })).summary, /escapes the sandbox/);
      assert.match(
        (await call('write', { path: 'link/x.txt', content: 'x' })).summary,
        /escapes the sandbox \(through a symlink\)/,
      );
      assert.match((await call('write', { path: '.git/hooks/pre-commit', content: 'x' })).summary, /inside \.git/);
      fs.mkdirSync(path.join(dir, 'd'));
      assert.equal((await call('write', { path: 'd', content: 'x' })).summary, 'd is a directory');
      assert.deepEqual(fs.readdirSync(outside), []);
    } finally {
      rmrf(outside);
    }
  });
});
