/** `@path` mentions: what they add to a message, what they refuse, and what Tab completes. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  completeMention,
  MAX_LISTING,
  MAX_MENTION_BYTES,
  mentionsOf,
  resolveMentions,
} from '../../../../../src/presentation/cli/chat/mentions.ts';

let root: string;
let cwd: string;

before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ca-mentions-')));
  cwd = join(root, 'repo');
  mkdirSync(join(cwd, 'src', 'deep'), { recursive: true });
  writeFileSync(join(cwd, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(cwd, 'src', 'b.ts'), 'b\n');
  writeFileSync(join(cwd, '.env'), 'SECRET=1\n');
  writeFileSync(join(cwd, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
  writeFileSync(join(cwd, 'big.txt'), 'x'.repeat(MAX_MENTION_BYTES + 1));
  writeFileSync(join(root, 'outside.txt'), 'not yours\n');
  symlinkSync(join(root, 'outside.txt'), join(cwd, 'sneaky.txt'));
  mkdirSync(join(cwd, 'many'));
  for (let i = 0; i < MAX_LISTING + 5; i++) writeFileSync(join(cwd, 'many', `f${String(i).padStart(3, '0')}`), '');
});
after(() => rmSync(root, { recursive: true, force: true }));

describe('mentionsOf', () => {
  it('finds @paths after a space or at the start, not in an address, without trailing punctuation', () => {
    assert.deepEqual(mentionsOf('@src/a.ts and @src/b.ts, mail me@example.com about (@lib).'), [
      'src/a.ts',
      'src/b.ts',
      'lib',
    ]);
  });
});

describe('resolveMentions', () => {
  it("adds a file's text under its path as an extra part", async () => {
    const got = await resolveMentions('explain @src/a.ts please', cwd);
    assert.deepEqual(got, {
      ok: true,
      paths: ['src/a.ts'],
      parts: [{ text: '--- src/a.ts ---\nexport const a = 1;\n', filename: 'src/a.ts', mediaType: 'text/plain' }],
    });
  });

  it("adds a folder's listing, one level, folders marked", async () => {
    const got = await resolveMentions('what is in @src', cwd);
    assert.ok(got.ok);
    assert.equal(got.parts[0]?.text, '--- src/ (folder listing) ---\na.ts\nb.ts\ndeep/');
  });

  it('bounds a long listing', async () => {
    const got = await resolveMentions('@many', cwd);
    assert.ok(got.ok);
    const lines = (got.parts[0]?.text ?? '').split('\n');
    assert.equal(lines.length, 1 + MAX_LISTING + 1);
    assert.equal(lines.at(-1), '… and 5 more');
  });

  it('refuses a path outside the directory, a link out of it, a missing, binary or too large file', async () => {
    const cases: [string, RegExp][] = [
      ['@../outside.txt', /^@\.\.\/outside\.txt is outside the chat's directory /],
      ['@/etc/passwd', /^@\/etc\/passwd is outside the chat's directory /],
      ['@sneaky.txt', /^@sneaky\.txt leads outside the chat's directory .* \(a symbolic link\)$/],
      ['@nope.ts', /^@nope\.ts: no such file or folder in /],
      ['@logo.png', /^@logo\.png is a binary file; mention text files$/],
      ['@big.txt', /^@big\.txt is 257 KiB; a mention takes files up to 256 KiB$/],
    ];
    for (const [line, expected] of cases) {
      const got = await resolveMentions(`look at ${line}`, cwd);
      assert.equal(got.ok, false, line);
      if (!got.ok) assert.match(got.problems[0] ?? '', expected);
    }
  });

  it('sends a line without mentions as it is', async () => {
    assert.deepEqual(await resolveMentions('no mentions here', cwd), { ok: true, parts: [], paths: [] });
  });
});

describe('completeMention', () => {
  it('completes the entries of the folder typed so far, folders with a /, hidden ones only after a .', async () => {
    assert.deepEqual(await completeMention('see @sr', cwd), [['@src/'], '@sr']);
    assert.deepEqual(await completeMention('see @src/', cwd), [['@src/a.ts', '@src/b.ts', '@src/deep/'], '@src/']);
    assert.deepEqual(await completeMention('@.e', cwd), [['@.env'], '@.e']);
    assert.deepEqual((await completeMention('@', cwd))[0].includes('@.env'), false);
  });

  it('completes nothing outside the directory or without an @', async () => {
    assert.deepEqual(await completeMention('@../', cwd), [[], '@../']);
    assert.deepEqual(await completeMention('plain words', cwd), [[], 'plain words']);
  });
});
