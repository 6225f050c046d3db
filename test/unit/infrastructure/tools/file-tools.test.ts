import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { compileFilter, compileGlob } from '../../../../src/infrastructure/tools/glob.ts';
import { exists, makeRepo, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('file tools', () => {
  let repo: string;
  let data: string;
  let sb: SandboxInfo;
  const runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() });
  const call = (name: string, args: Record<string, unknown>): Promise<ToolCallResult> => {
    const tool = BUILTIN_TOOLS.find((t) => t.name === `builtin/${name}`) as ToolDefinition;
    return runner.run({ tool, args, sandbox: sb, signal: new AbortController().signal, timeoutMs: 10_000 });
  };

  before(async () => {
    repo = makeRepo();
    data = tmpDir('data');
    sb = await new GitSandboxManager({ root: path.join(data, 'sandboxes') }).create('P1', {
      name: 'local/app',
      type: 'git-checkout',
      path: repo,
    });
  });
  after(() => rmrf(repo, data));

  it('read-file reads a whole file or a line range', async () => {
    assert.deepEqual(await call('read-file', { path: 'a.txt' }), {
      ok: true,
      summary: 'read a.txt (3 lines)',
      output: 'one\ntwo\nthree\n',
      filesTouched: [],
    });
    const r = await call('read-file', { path: 'a.txt', startLine: 2, endLine: 3 });
    assert.equal(r.output, 'two\nthree\n');
    assert.equal(r.summary, 'read a.txt lines 2–3 of 3');
    assert.match(
      (await call('read-file', { path: 'a.txt', startLine: 9 })).summary,
      /startLine 9 is past the end of a\.txt \(3 lines\)/,
    );
    assert.equal((await call('read-file', { path: 'a.txt', startLine: 3 })).output, 'three\n');
    assert.match(
      (await call('read-file', { path: 'a.txt', startLine: 3, endLine: 1 })).summary,
      /endLine must not be before startLine/,
    );
    assert.match((await call('read-file', { path: 'missing.txt' })).summary, /missing\.txt does not exist/);
    assert.match((await call('read-file', { path: 'src' })).summary, /src is not a file/);
    assert.equal((await call('read-file', { path: '' })).summary, 'the project root (an empty path) is not a file');
  });

  it('read-file refuses files over 5 MB and binary files', async () => {
    write(sb.root, 'big.txt', Buffer.alloc(5 * 1024 * 1024 + 1, 'a'));
    write(sb.root, 'bin.dat', Buffer.from([1, 0, 2]));
    const big = await call('read-file', { path: 'big.txt' });
    assert.equal(big.ok, false);
    assert.match(big.summary, /files over 5242880 bytes are refused/);
    assert.equal(big.output, '');
    assert.match((await call('read-file', { path: 'bin.dat' })).summary, /bin\.dat is a binary file/);
    rmrf(path.join(sb.root, 'big.txt'), path.join(sb.root, 'bin.dat'));
  });

  it('write-file creates directories and reports the file; an identical write touches nothing', async () => {
    const r = await call('write-file', { path: 'deep/er/new.txt', content: 'hello\n' });
    assert.deepEqual(r, {
      ok: true,
      summary: 'created deep/er/new.txt (6 bytes)',
      output: '',
      filesTouched: ['deep/er/new.txt'],
    });
    assert.equal(read(sb.root, 'deep/er/new.txt'), 'hello\n');
    assert.deepEqual((await call('write-file', { path: 'deep/er/new.txt', content: 'hello\n' })).filesTouched, []);
    const over = await call('write-file', { path: 'deep/er/new.txt', content: 'bye\n' });
    assert.equal(over.summary, 'wrote deep/er/new.txt (4 bytes)');
    assert.match((await call('write-file', { path: 'deep', content: 'x' })).summary, /deep is a directory/);
    assert.match((await call('write-file', { path: 'x.txt' })).summary, /argument content must be a string/);
  });

  it('edit-file replaces every occurrence, or exactly one with expectOne, and fails when not found', async () => {
    write(sb.root, 'e.txt', 'foo bar foo\n');
    const many = await call('edit-file', { path: 'e.txt', find: 'foo', replace: 'baz', expectOne: true });
    assert.equal(many.ok, false);
    assert.match(many.summary, /occurs 2 times in e\.txt; expected exactly one/);
    assert.equal(read(sb.root, 'e.txt'), 'foo bar foo\n');
    assert.match(
      (await call('edit-file', { path: 'e.txt', find: 'nope', replace: 'x' })).summary,
      /does not occur in e\.txt/,
    );
    const all = await call('edit-file', { path: 'e.txt', find: 'foo', replace: '$&$1' });
    assert.deepEqual(all, { ok: true, summary: 'edited e.txt: 2 replacements', output: '', filesTouched: ['e.txt'] });
    assert.equal(read(sb.root, 'e.txt'), '$&$1 bar $&$1\n', 'the replacement is literal text');
    const one = await call('edit-file', { path: 'e.txt', find: 'bar', replace: 'BAR', expectOne: true });
    assert.equal(one.summary, 'edited e.txt: 1 replacement');
    assert.match(
      (await call('edit-file', { path: 'e.txt', find: '', replace: 'x' })).summary,
      /find must not be empty/,
    );
    assert.match(
      (await call('edit-file', { path: 'gone.txt', find: 'a', replace: 'b' })).summary,
      /gone\.txt does not exist/,
    );
  });

  it('list-files lists files under a directory with include and exclude globs, never .git', async () => {
    write(sb.root, 'src/lib/util.ts', 'export {};\n');
    write(sb.root, 'src/lib/util.test.ts', 'export {};\n');
    write(sb.root, 'src/readme.md', '#\n');
    const all = await call('list-files', {});
    assert.ok(all.output.split('\n').includes('src/lib/util.ts'));
    assert.ok(!all.output.includes('.git/') && !all.output.split('\n').includes('.git'));
    const ts = await call('list-files', { path: 'src', include: ['*.ts'], exclude: ['*.test.ts'] });
    assert.equal(ts.output, 'src/b.ts\nsrc/lib/util.ts');
    assert.equal(ts.summary, '2 files');
    assert.equal(
      (await call('list-files', { path: 'src', include: ['lib/**'] })).output,
      'src/lib/util.test.ts\nsrc/lib/util.ts',
    );
    assert.equal(
      (await call('list-files', { include: ['src/**/*.{md,ts}'], exclude: ['**/lib/**'] })).output,
      'src/b.ts\nsrc/readme.md',
    );
    assert.match((await call('list-files', { path: 'a.txt' })).summary, /a\.txt is not a directory/);
  });

  it('search-files finds regular-expression matches as path:line: text, up to maxResults', async () => {
    write(sb.root, 'src/one.ts', 'const x = 1;\nconst y = 2;\n');
    write(sb.root, 'notes.md', 'const in markdown\n');
    const r = await call('search-files', { pattern: '^const [xy]', include: ['*.ts'] });
    assert.equal(r.output, 'src/one.ts:1: const x = 1;\nsrc/one.ts:2: const y = 2;');
    assert.equal(r.summary, '2 matches in 1 file');
    const capped = await call('search-files', { pattern: 'const', maxResults: 1, path: 'src' });
    assert.equal(capped.output.split('\n').length, 1);
    assert.match(capped.summary, /\(truncated\)/);
    assert.match((await call('search-files', { pattern: '(' })).summary, /invalid regular expression/);
  });

  it('git-status and git-diff show the sandbox against its base', async () => {
    const st = await call('git-status', {});
    assert.equal(st.ok, true);
    assert.match(st.output, /^\?\? deep\/er\/new\.txt$/m);
    const d = await call('git-diff', { paths: ['e.txt'] });
    assert.match(d.output, /^\+\$&\$1 BAR \$&\$1$/m);
    assert.equal(d.summary, '1 file changed, +1 −0');
    const staged = await call('git-diff', { staged: true });
    assert.equal(staged.output, '', 'nothing is staged in the sandbox');
  });

  it('fails for tools it does not run', async () => {
    const mcp: ToolDefinition = {
      name: 'local/remote',
      source: 'mcp:srv',
      inputSchema: { type: 'object' },
      readOnly: true,
      writes: false,
    };
    const r = await runner.run({
      tool: mcp,
      args: {},
      sandbox: sb,
      signal: new AbortController().signal,
      timeoutMs: 1000,
    });
    assert.equal(r.ok, false);
    assert.match(r.summary, /not a tool this runner knows/);
    assert.equal(exists(path.join(sb.root, 'nothing')), false);
  });
});

describe('glob matcher', () => {
  it('matches names at any depth without a slash, and whole paths with one', () => {
    assert.equal(compileGlob('*.ts')('a/b/c.ts'), true);
    assert.equal(compileGlob('*.ts')('a/b/c.tsx'), false);
    assert.equal(compileGlob('src/*.ts')('src/a.ts'), true);
    assert.equal(compileGlob('src/*.ts')('src/x/a.ts'), false);
    assert.equal(compileGlob('src/**/*.ts')('src/a.ts'), true);
    assert.equal(compileGlob('src/**/*.ts')('src/x/y/a.ts'), true);
    assert.equal(compileGlob('**')('anything/at/all'), true);
    assert.equal(compileGlob('file?.{js,ts}')('file1.ts'), true);
    assert.equal(compileGlob('file?.{js,ts}')('file12.ts'), false);
    assert.equal(compileGlob('[ab].txt')('b.txt'), true);
    assert.equal(compileGlob('[!ab].txt')('b.txt'), false);
    assert.equal(compileGlob('a+b(c).txt')('a+b(c).txt'), true);
    assert.equal(compileFilter(['*.ts'], ['*.d.ts'])('x/types.d.ts'), false);
    assert.equal(compileFilter()('whatever'), true);
  });
});
