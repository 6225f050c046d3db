import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { exists, fingerprint, makeRepo, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';

const tool = (name: string): ToolDefinition => {
  const t = BUILTIN_TOOLS.find((x) => x.name === `builtin/${name}`);
  if (!t) throw new Error(name);
  return t;
};

/** A command tool that would write "pwned" into its first path argument if it ever ran. */
const clobber: ToolDefinition = {
  name: 'local/clobber',
  source: 'command',
  command: { program: 'sh', args: ['-c', 'echo pwned > "$1"', 'sh'] },
  inputSchema: { type: 'object' },
  readOnly: false,
  writes: true,
};

type Call = [ToolDefinition, (p: string) => Record<string, unknown>];
const READERS: Record<string, Call> = {
  'read-file': [tool('read-file'), (p) => ({ path: p })],
  'list-files': [tool('list-files'), (p) => ({ path: p })],
  'search-files': [tool('search-files'), (p) => ({ pattern: '.', path: p })],
  'run-command cwd': [tool('run-command'), (p) => ({ program: 'sh', args: ['-c', 'echo pwned > new.txt'], cwd: p })],
  'git-diff paths': [tool('git-diff'), (p) => ({ paths: [p] })],
};
const WRITERS: Record<string, Call> = {
  'write-file': [tool('write-file'), (p) => ({ path: p, content: 'pwned\n' })],
  'edit-file': [tool('edit-file'), (p) => ({ path: p, find: 'secret', replace: 'pwned' })],
  'command tool paths': [clobber, (p) => ({ paths: [p] })],
};

for (const kind of ['git-checkout', 'fs-directory'] as const) {
  describe(`path traversal and symlink escapes (${kind} sandbox)`, () => {
    let repo: string;
    let data: string;
    let outside: string;
    let sb: SandboxInfo;
    const runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() });
    const run = (t: ToolDefinition, args: Record<string, unknown>): Promise<ToolCallResult> =>
      runner.run({ tool: t, args, sandbox: sb, signal: new AbortController().signal, timeoutMs: 10_000 });

    before(async () => {
      repo = makeRepo();
      data = tmpDir('data');
      outside = tmpDir('outside');
      write(outside, 'secret.txt', 'secret\n');
      write(outside, 'x', 'secret x\n');
      const manager = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
      sb = await manager.create('P1', { name: 'local/app', type: kind, path: repo });
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(sb.root, 'out-file'));
      fs.symlinkSync(outside, path.join(sb.root, 'out-dir'));
      fs.symlinkSync(path.join(outside, 'new.txt'), path.join(sb.root, 'dangling'));
      fs.symlinkSync('../../../../../../../../../../../../tmp', path.join(sb.root, 'src', 'up'));
      fs.symlinkSync('a.txt', path.join(sb.root, 'in-link'));
      fs.symlinkSync('src', path.join(sb.root, 'in-dir'));
    });
    after(() => rmrf(repo, data, outside));

    const escapes = [
      '../x',
      '../../x',
      'a/../../x',
      'src/../../x',
      '/etc/passwd',
      '/etc',
      'out-file',
      'out-dir',
      'out-dir/secret.txt',
      'out-dir/new.txt',
      'out-dir/sub/new.txt',
      'dangling',
      'src/up/x',
      'in-dir/../../x',
    ];

    for (const [name, [t, argsFor]] of Object.entries({ ...READERS, ...WRITERS })) {
      it(`${name}: refuses every escaping path and touches nothing outside`, async () => {
        const outsideBefore = fingerprint(outside);
        const parentBefore = fs.readdirSync(path.dirname(sb.root)).sort();
        const paths = [...escapes, path.join(outside, 'secret.txt'), `${path.dirname(sb.root)}/x`];
        for (const p of paths) {
          const r = await run(t, argsFor(p));
          assert.equal(r.ok, false, `${name} ${p}: ${r.summary}`);
          assert.match(r.summary, /escapes the sandbox/, `${name} ${p}`);
          assert.deepEqual(r.filesTouched, []);
          assert.doesNotMatch(r.output, /secret|root:/, `${name} ${p} leaked content`);
        }
        const r = await run(t, argsFor('a\0b'));
        assert.equal(r.ok, false);
        assert.match(r.summary, /escapes the sandbox \(it contains a NUL byte\)/);
        assert.equal(fingerprint(outside), outsideBefore);
        assert.deepEqual(fs.readdirSync(path.dirname(sb.root)).sort(), parentBefore);
        assert.equal(exists(path.join(outside, 'new.txt')), false);
        assert.equal(exists(path.join(outside, 'sub')), false);
        // /tmp/x may be anything another program left there: only a file the tool wrote counts.
        const tmpX = fs.statSync('/tmp/x', { throwIfNoEntry: false });
        assert.equal(tmpX?.isFile() === true && read('/tmp', 'x').includes('pwned'), false);
      });
    }

    for (const [name, [t, argsFor]] of Object.entries(WRITERS)) {
      it(`${name}: refuses writes into .git`, async () => {
        const gitBefore =
          kind === 'git-checkout'
            ? fs.readFileSync(path.join(sb.root, '.git'), 'utf8')
            : fingerprint(path.join(sb.root, '.git'));
        for (const p of [
          '.git',
          '.git/config',
          '.git/hooks/pre-commit',
          'sub/.git/x',
          '.GIT/config',
          './src/../.git/HEAD',
        ]) {
          const r = await run(t, argsFor(p));
          assert.equal(r.ok, false, `${name} ${p}`);
          assert.match(r.summary, /inside \.git/, `${name} ${p}`);
        }
        const gitAfter =
          kind === 'git-checkout'
            ? fs.readFileSync(path.join(sb.root, '.git'), 'utf8')
            : fingerprint(path.join(sb.root, '.git'));
        assert.equal(gitAfter, gitBefore);
      });
    }

    it('allows paths that stay inside: absolute inside the root, ./ and .. that come back, symlinks inside', async () => {
      const ok = async (t: ToolDefinition, args: Record<string, unknown>): Promise<ToolCallResult> => {
        const r = await run(t, args);
        assert.equal(r.ok, true, `${t.name} ${JSON.stringify(args)}: ${r.summary}`);
        return r;
      };
      assert.equal((await ok(tool('read-file'), { path: path.join(sb.root, 'a.txt') })).output, 'one\ntwo\nthree\n');
      assert.equal((await ok(tool('read-file'), { path: 'src/../a.txt' })).output, 'one\ntwo\nthree\n');
      assert.equal((await ok(tool('read-file'), { path: 'in-link' })).output, 'one\ntwo\nthree\n');
      assert.equal((await ok(tool('read-file'), { path: 'in-dir/b.ts' })).output, 'export const b = 1;\n');
      const w = await ok(tool('write-file'), { path: 'in-link', content: 'through an inside link\n' });
      assert.deepEqual(w.filesTouched, ['a.txt'], 'the file really written is reported');
      assert.equal(read(sb.root, 'a.txt'), 'through an inside link\n');
      assert.ok(fs.lstatSync(path.join(sb.root, 'in-link')).isSymbolicLink(), 'the link itself is kept');
      const w2 = await ok(tool('write-file'), { path: './in-dir/deep/new.ts', content: 'x\n' });
      assert.deepEqual(w2.filesTouched, ['src/deep/new.ts']);
      await ok(tool('list-files'), { path: 'in-dir' });
      await ok(tool('write-file'), { path: '.gitignore2', content: 'not .git\n' });
    });
  });
}
