import { after, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BuiltinToolRunner, CommandConfinement } from '../../../../src/infrastructure/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { fingerprint, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';
import { dirSandbox, toolsAt } from './coding-tools.fixture.ts';

describe('ToolRunner.preview', () => {
  let dir: string;
  const { preview } = toolsAt(() => dir);
  beforeEach(() => {
    if (dir) rmrf(dir);
    dir = tmpDir('preview');
    write(dir, 'src/app.js', 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
  });
  after(() => rmrf(dir));

  it('edit: the unified diff against the current file, nothing written', async () => {
    const before = fingerprint(dir);
    const p = await preview('edit', {
      path: 'src/app.js',
      edits: [{ oldText: 'const b = 2;', newText: 'const b = 20;' }],
    });
    assert.equal(
      p.diff,
      '--- a/src/app.js\n+++ b/src/app.js\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;\n',
    );
    assert.equal(p.problem, undefined);
    assert.deepEqual(fingerprint(dir), before);
  });

  it('edit that would fail: the problem, no diff', async () => {
    const p = await preview('edit', { path: 'src/app.js', edits: [{ oldText: 'const', newText: 'let' }] });
    assert.equal(p.diff, undefined);
    assert.match(p.problem ?? '', /oldText occurs 3 times in src\/app\.js/);
    assert.match(
      (await preview('edit', { path: '../x', edits: [{ oldText: 'a', newText: 'b' }] })).problem ?? '',
      /escapes the sandbox/,
    );
  });

  it('write: a new file against /dev/null, an existing one against its content; nothing written', async () => {
    const created = await preview('write', { path: 'new/file.txt', content: 'hello\n' });
    assert.equal(created.diff, '--- /dev/null\n+++ b/new/file.txt\n@@ -0,0 +1,1 @@\n+hello\n');
    const over = await preview('write-file', { path: 'src/app.js', content: 'const a = 1;\n' });
    assert.equal(
      over.diff,
      '--- a/src/app.js\n+++ b/src/app.js\n@@ -1,3 +1,1 @@\n const a = 1;\n-const b = 2;\n-const c = 3;\n',
    );
    assert.equal(read(dir, 'src/app.js'), 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    assert.throws(() => read(dir, 'new/file.txt'));
    assert.equal(
      (await preview('write', { path: 'src/app.js', content: 'const a = 1;\nconst b = 2;\nconst c = 3;\n' })).diff,
      '',
    );
  });

  it('edit-file: its find/replace as a diff, and its refusals as the problem', async () => {
    const p = await preview('edit-file', { path: 'src/app.js', find: ' = ', replace: ' := ' });
    assert.match(p.diff ?? '', /^-const a = 1;\n-const b = 2;\n-const c = 3;\n\+const a := 1;\n/m);
    const one = await preview('edit-file', { path: 'src/app.js', find: 'const', replace: 'let', expectOne: true });
    assert.match(one.problem ?? '', /occurs 3 times/);
  });

  it('bash and run-command: the exact command line and where it runs', async () => {
    assert.deepEqual(await preview('bash', { command: 'npm test | tail -5 && echo "ok"', cwd: 'src' }), {
      command: 'npm test | tail -5 && echo "ok"',
      cwd: 'src',
    });
    assert.deepEqual(await preview('run-command', { program: 'git', args: ['commit', '-m', "it's done"] }), {
      command: "git commit -m 'it'\\''s done'",
      cwd: '.',
    });
    assert.deepEqual(await preview('run-command', { command: 'prettier --write "src/a b.ts"' }), {
      command: "prettier --write 'src/a b.ts'",
      cwd: '.',
    });
    assert.match((await preview('bash', { command: 'ls', cwd: '../..' })).problem ?? '', /escapes the sandbox/);
  });

  it('a command tool: its program, its args, then the call args and paths', async () => {
    const tool: ToolDefinition = {
      name: 'local/fmt',
      source: 'command',
      command: { program: 'prettier', args: ['--write'] },
      inputSchema: { type: 'object' },
      readOnly: false,
      writes: true,
    };
    const runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() });
    const p = await runner.preview({
      tool,
      args: { args: ['--log-level', 'warn'], paths: ['src/app.js', '-rf'] },
      sandbox: dirSandbox(dir),
      signal: new AbortController().signal,
    });
    assert.deepEqual(p, { command: 'prettier --write --log-level warn src/app.js ./-rf', cwd: '.' });
  });

  it('read-only tools preview as nothing', async () => {
    assert.deepEqual(await preview('read', { path: 'src/app.js' }), {});
    assert.deepEqual(await preview('grep', { pattern: 'x' }), {});
  });
});
