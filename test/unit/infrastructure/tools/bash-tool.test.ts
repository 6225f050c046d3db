import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { CommandOutputChunk, SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import { KEPT_OUTPUT_BYTES } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { makeRepo, read, rmrf, tmpDir } from '../fixtures/repos.ts';
import { alive, waitUntil } from '../fixtures/processes.ts';
import { builtin } from './coding-tools.fixture.ts';

describe('bash, and the output of every command tool', () => {
  let repo: string;
  let data: string;
  let sb: SandboxInfo;
  const runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() });
  const run = (
    tool: ToolDefinition,
    args: Record<string, unknown>,
    opts: { timeoutMs?: number; onOutput?: (c: CommandOutputChunk) => void; with?: BuiltinToolRunner } = {},
  ): Promise<ToolCallResult> =>
    (opts.with ?? runner).run({
      tool,
      args,
      sandbox: sb,
      signal: new AbortController().signal,
      timeoutMs: opts.timeoutMs ?? 20_000,
      onOutput: opts.onOutput,
    });
  const bash = (command: string, opts: Parameters<typeof run>[2] = {}): Promise<ToolCallResult> =>
    run(builtin('bash'), { command }, opts);

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

  it('runs a command line in a shell: pipes, && and cd work, from the root or cwd', async () => {
    const r = await bash('cat a.txt | grep -c o && cd src && pwd');
    assert.equal(r.ok, true, r.summary + r.output);
    assert.equal(r.output, `2\n${path.join(sb.root, 'src')}\n`);
    assert.equal(r.summary, '$ cat a.txt | grep -c o && cd src && pwd: exit 0');
    assert.equal(r.exitCode, 0);
    assert.equal((await run(builtin('bash'), { command: 'pwd', cwd: 'src' })).output, `${path.join(sb.root, 'src')}\n`);
    assert.equal((await bash('echo "$0"')).output, 'bash\n', 'bash, where there is one');
  });

  it('reports the exit code, the files changed, and refuses a cwd outside', async () => {
    const r = await bash('echo new > made.txt; echo oops >&2; exit 3');
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, 3);
    assert.equal(r.summary, '$ echo new > made.txt; echo oops >&2; exit 3: exit 3; 1 file changed');
    assert.deepEqual(r.filesTouched, ['made.txt']);
    assert.equal(r.output, 'oops\n');
    fs.rmSync(path.join(sb.root, 'made.txt'));
    assert.match((await run(builtin('bash'), { command: 'pwd', cwd: '..' })).summary, /escapes the sandbox/);
    assert.match((await bash('  ')).summary, /argument command must not be empty/);
  });

  it('streams output through onOutput as it comes, in order, both streams', async () => {
    const chunks: CommandOutputChunk[] = [];
    let sawFirstBeforeExit = false;
    const r = await bash('echo first; sleep 0.3; echo second >&2; sleep 0.3; echo third', {
      onOutput: (c) => {
        chunks.push(c);
        // The second line is written 0.3 s after the first: a chunk arriving alone shows streaming.
        if (chunks.length === 1 && c.text === 'first\n') sawFirstBeforeExit = true;
      },
    });
    assert.equal(r.ok, true);
    assert.deepEqual(chunks, [
      { stream: 'stdout', text: 'first\n' },
      { stream: 'stderr', text: 'second\n' },
      { stream: 'stdout', text: 'third\n' },
    ]);
    assert.ok(sawFirstBeforeExit);
    assert.deepEqual(r.commandOutput, { text: 'first\nsecond\nthird\n', bytes: 19, truncated: false });
  });

  it('a listener that throws does not stop the command', async () => {
    const r = await bash('echo a; echo b', {
      onOutput: () => {
        throw new Error('listener broke');
      },
    });
    assert.equal(r.ok, true);
    assert.equal(r.output, 'a\nb\n');
  });

  it('gives the model the head and the tail of a long output, and keeps all of it', async () => {
    const r = await bash('seq 1 1000');
    const lines = r.output.split('\n');
    assert.equal(lines[0], '1');
    assert.equal(lines[199], '200');
    assert.equal(lines[200], '… 600 lines (2400 bytes) cut …');
    assert.equal(lines[201], '801');
    assert.equal(lines.at(-2), '1000');
    const all = Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join('');
    assert.deepEqual(r.commandOutput, { text: all, bytes: all.length, truncated: false });
  });

  it('cuts the kept output from the middle past KEPT_OUTPUT_BYTES, counting every byte', async () => {
    const r = await bash('echo START; head -c 3000000 /dev/zero | tr "\\0" x; echo; echo END');
    const kept = r.commandOutput;
    assert.ok(kept);
    assert.equal(kept.truncated, true);
    assert.equal(kept.bytes, 6 + 3_000_000 + 1 + 4);
    assert.ok(Buffer.byteLength(kept.text) <= KEPT_OUTPUT_BYTES, `${Buffer.byteLength(kept.text)} bytes kept`);
    assert.match(kept.text, /^START\nx+\n… \[output truncated: \d+ bytes cut from the middle\] …\nx+\nEND\n$/);
    assert.ok(Buffer.byteLength(r.output) < 40 * 1024, `${Buffer.byteLength(r.output)} bytes for the model`);
    assert.equal(
      r.output.replace(/x+/g, (m) => `x{${m.length}}`),
      'START\nx{16378}\n… 2967243 bytes cut …\nx{16379}\nEND\n',
    );
  });

  // Without the kill the call would last 300 s: the test's own timeout then fails it.
  it('kills the command and all it started at the time limit, and says so', { timeout: 60_000 }, async () => {
    const r = await bash('sleep 300 & echo $! > bg.pid; wait', { timeoutMs: 500 });
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, null);
    assert.match(r.summary, /^\$ sleep 300 & echo \$! > bg\.pid; wait: killed after the 500 ms time limit/);
    const pid = Number(read(sb.root, 'bg.pid'));
    assert.ok(await waitUntil(() => !alive(pid), 3000), `background sleep ${pid} still running`);
    fs.rmSync(path.join(sb.root, 'bg.pid'));
    const long = await run(builtin('bash'), { command: 'sleep 300', timeoutMs: 1000 }, { timeoutMs: 20_000 });
    assert.match(long.summary, /killed after the 1 s time limit/);
  });

  it('names the signal that ended a command', async () => {
    const r = await bash('kill -TERM $$');
    assert.equal(r.exitCode, null);
    assert.match(r.summary, /: killed by SIGTERM$/);
  });

  it('falls back to sh where there is no bash', async () => {
    const bin = tmpDir('bin');
    try {
      for (const p of ['sh', 'echo']) fs.symlinkSync(fs.realpathSync(`/bin/${p}`), path.join(bin, p));
      const noBash = new BuiltinToolRunner({
        confinement: CommandConfinement.unconfined({ serverEnv: { PATH: bin } }),
      });
      const r = await bash('echo "$0" | cat 2>/dev/null || echo "$0"', { with: noBash });
      assert.equal(r.output.trim(), 'sh', r.summary + r.output);
    } finally {
      rmrf(bin);
    }
  });

  it('run-command streams its output and keeps it the same way', async () => {
    const chunks: string[] = [];
    const r = await run(
      builtin('run-command'),
      { program: 'seq', args: ['1', '500'] },
      { onOutput: (c) => chunks.push(c.text) },
    );
    assert.equal(chunks.join(''), r.commandOutput?.text);
    assert.equal(r.commandOutput?.bytes, 1892);
    assert.match(r.output, /\n200\n… 100 lines \(400 bytes\) cut …\n301\n/);
  });

  it('a registry command tool streams and keeps its output too', async () => {
    const tool: ToolDefinition = {
      name: 'local/count',
      source: 'command',
      command: { program: 'seq', args: ['3'] },
      inputSchema: { type: 'object' },
      readOnly: true,
      writes: false,
    };
    const chunks: string[] = [];
    const r = await run(tool, {}, { onOutput: (c) => chunks.push(c.text) });
    assert.equal(chunks.join(''), '1\n2\n3\n');
    assert.deepEqual(r.commandOutput, { text: '1\n2\n3\n', bytes: 6, truncated: false });
  });
});
