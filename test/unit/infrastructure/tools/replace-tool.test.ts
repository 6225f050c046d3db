import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { BuiltinToolRunner } from '../../../../src/infrastructure/tools/builtin-tool.runner.ts';
import { CommandConfinement } from '../../../../src/infrastructure/tools/confinement.ts';

const tool = BUILTIN_TOOLS.find((t) => t.name === 'builtin/replace-in-files');

describe('builtin/replace-in-files', () => {
  const root = mkdtempSync(join(tmpdir(), 'ca-replace-'));
  const outside = mkdtempSync(join(tmpdir(), 'ca-outside-'));
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  mkdirSync(join(root, 'src/deep'), { recursive: true });
  writeFileSync(join(root, 'src/a.ts'), 'const colour = 1; // colour\n');
  writeFileSync(join(root, 'src/deep/b.ts'), 'colourful(colour)\n');
  writeFileSync(join(root, 'README.md'), 'colour stays here\n');
  writeFileSync(join(outside, 'victim.ts'), 'colour\n');
  symlinkSync(join(outside, 'victim.ts'), join(root, 'src/link.ts'));
  const sandbox = { resource: 'local/x', kind: 'copy' as const, root, source: root, baseCommit: 'x' };
  const run = (args: Record<string, unknown>) =>
    new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() }).run({
      tool: tool!,
      args,
      sandbox,
      signal: new AbortController().signal,
      timeoutMs: 5000,
    });

  it('replaces every match in the files of the glob, with groups, and reports the files touched', async () => {
    const r = await run({ pattern: 'colou?r(\\w*)', replacement: 'color$1', include: ['src/**/*.ts'] });
    assert.equal(r.ok, true, r.summary);
    assert.deepEqual(r.filesTouched.sort(), ['src/a.ts', 'src/deep/b.ts']);
    assert.equal(readFileSync(join(root, 'src/a.ts'), 'utf8'), 'const color = 1; // color\n');
    assert.equal(readFileSync(join(root, 'src/deep/b.ts'), 'utf8'), 'colorful(color)\n');
    assert.equal(readFileSync(join(root, 'README.md'), 'utf8'), 'colour stays here\n', 'outside the glob');
    assert.equal(
      readFileSync(join(outside, 'victim.ts'), 'utf8'),
      'colour\n',
      'a symlink out of the sandbox is not followed',
    );
    assert.match(r.summary, /4 matches .* 2 files/);
  });

  it('refuses a bad pattern or no glob, touching nothing', async () => {
    assert.equal((await run({ pattern: '(', replacement: 'x', include: ['**/*'] })).ok, false);
    assert.equal((await run({ pattern: 'x', replacement: 'y', include: [] })).ok, false);
    assert.equal((await run({ pattern: 'x', replacement: 'y', include: ['**/*'], flags: 'q' })).ok, false);
  });
});
