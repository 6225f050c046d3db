import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { makeRepo, read, rmrf, tmpDir, write } from '../fixtures/repos.ts';
import { alive, waitUntil } from '../fixtures/processes.ts';

const runCommand = BUILTIN_TOOLS.find((t) => t.name === 'builtin/run-command') as ToolDefinition;

/** Running (a zombie waiting for a slow init to reap it is not running). */

describe('run-command and command tools', () => {
  let repo: string;
  let data: string;
  let sb: SandboxInfo;
  const runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() });
  const run = (
    args: Record<string, unknown>,
    opts: { timeoutMs?: number; signal?: AbortSignal; tool?: ToolDefinition } = {},
  ): Promise<ToolCallResult> =>
    runner.run({
      tool: opts.tool ?? runCommand,
      args,
      sandbox: sb,
      signal: opts.signal ?? new AbortController().signal,
      timeoutMs: opts.timeoutMs ?? 20_000,
    });

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

  it('runs without a shell in the sandbox and reports the exit code and the output of both streams', async () => {
    const r = await run({ program: 'sh', args: ['-c', 'pwd; echo out; echo err >&2; exit 3'] });
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, 3);
    assert.match(r.summary, /exit 3$/);
    assert.match(r.output, new RegExp(`^${sb.root}\nout\n`));
    assert.match(r.output, /err/);
    const literal = await run({ program: 'echo', args: ['$HOME', '; rm -rf /', '`id`'] });
    assert.equal(literal.output, '$HOME ; rm -rf / `id`\n', 'arguments reach the program verbatim');
    const sub = await run({ program: 'pwd', cwd: 'src' });
    assert.equal(sub.output, `${path.join(sb.root, 'src')}\n`);
  });

  it('reports exactly the files a command changed, by content', async () => {
    write(sb.root, 'c.txt', 'changed before the command\n');
    write(sb.root, 'same.txt', 'same\n');
    const r = await run({
      program: 'sh',
      args: [
        '-c',
        'echo x > new.txt; echo y >> a.txt; rm src/b.ts; echo again >> c.txt; echo same > same.txt; mkdir -p d/e && echo z > d/e/f.txt',
      ],
    });
    assert.equal(r.ok, true, r.summary);
    assert.equal(r.exitCode, 0);
    assert.deepEqual(r.filesTouched, ['a.txt', 'c.txt', 'd/e/f.txt', 'new.txt', 'src/b.ts']);
    assert.match(r.summary, /5 files changed/);
    const none = await run({ program: 'cat', args: ['a.txt'] });
    assert.deepEqual(none.filesTouched, []);
  });

  it('kills a command at its time limit, promptly', async () => {
    const r = await run({ program: 'sleep', args: ['30'] }, { timeoutMs: 300 });
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, null);
    assert.match(r.summary, /killed after the 300 ms time limit/);
  });

  it('kills the whole process group: a shell and the job it started in the background', async () => {
    const r = await run({ program: 'sh', args: ['-c', 'sleep 30 & echo $! > bg.pid; wait'], timeoutMs: 500 });
    assert.equal(r.exitCode, null);
    const pid = Number(read(sb.root, 'bg.pid'));
    assert.ok(pid > 0);
    assert.ok(await waitUntil(() => !alive(pid), 1000), `background sleep ${pid} still running`);
    assert.deepEqual(r.filesTouched, ['bg.pid']);
    fs.rmSync(path.join(sb.root, 'bg.pid'));
  });

  it('the call cannot extend the time limit it was given', async () => {
    const r = await run({ program: 'sleep', args: ['30'], timeoutMs: 3_600_000 }, { timeoutMs: 300 });
    assert.match(r.summary, /300 ms time limit/);
  });

  it('kills the command when the signal aborts, and does not start one when already aborted', async () => {
    const ac = new AbortController();
    // Abort once the command is running (its background job has written its pid), not at a set time.
    void waitUntil(() => fs.existsSync(path.join(sb.root, 'bg2.pid')), 60_000).then(() => ac.abort());
    const r = await run({ program: 'sh', args: ['-c', 'sleep 300 & echo $! > bg2.pid; wait'] }, { signal: ac.signal });
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, null);
    assert.match(r.summary, /cancelled/);
    const pid = Number(read(sb.root, 'bg2.pid'));
    assert.ok(await waitUntil(() => !alive(pid), 1000));
    fs.rmSync(path.join(sb.root, 'bg2.pid'));

    const done = new AbortController();
    done.abort();
    const r2 = await run({ program: 'sh', args: ['-c', 'echo ran > ran.txt'] }, { signal: done.signal });
    assert.equal(r2.ok, false);
    assert.match(r2.summary, /cancelled before it started/);
    assert.equal(fs.existsSync(path.join(sb.root, 'ran.txt')), false);
  });

  it('cleans up what a finished command left running in the background', async () => {
    const r = await run({ program: 'sh', args: ['-c', 'sleep 30 & echo $! > bg3.pid'] });
    assert.equal(r.exitCode, 0);
    const pid = Number(read(sb.root, 'bg3.pid'));
    assert.ok(await waitUntil(() => !alive(pid), 1000));
    fs.rmSync(path.join(sb.root, 'bg3.pid'));
  });

  it('keeps at most 1 MB of the output (head and tail) for the record, and gives the model 32 KB of it', async () => {
    const r = await run({
      program: 'sh',
      args: ['-c', 'echo START; head -c 3000000 /dev/zero | tr "\\0" x; echo; echo END'],
    });
    assert.equal(r.ok, true);
    const kept = r.commandOutput?.text ?? '';
    assert.ok(Buffer.byteLength(kept) <= 1024 * 1024, `${Buffer.byteLength(kept)} bytes`);
    assert.match(kept, /^START\n/);
    assert.match(kept, /\[output truncated: \d+ bytes cut from the middle\]/);
    assert.match(kept, /END\n$/);
    assert.ok(Buffer.byteLength(r.output) <= 32 * 1024 + 100, `${Buffer.byteLength(r.output)} bytes`);
    assert.match(r.output, /^START\n[^]*\n… \d+ bytes cut …\n[^]*END\n$/);
  });

  it('fails cleanly for a program that does not exist', async () => {
    const r = await run({ program: 'no-such-program-cleveragents' });
    assert.equal(r.ok, false);
    assert.match(r.summary, /cannot run no-such-program-cleveragents: .*ENOENT/);
    assert.equal(r.exitCode, null);
  });

  it('rejects bad arguments', async () => {
    assert.match((await run({})).summary, /argument program must be a string/);
    assert.match(
      (await run({ program: 'true', args: 'not an array' })).summary,
      /argument args must be an array of strings/,
    );
    assert.match((await run({ program: 'true', cwd: 'a.txt' })).summary, /cwd a\.txt is not a directory/);
  });

  it('runs a command tool with its args, then args.args, then args.paths (relative, kept from reading as options)', async () => {
    const tool: ToolDefinition = {
      name: 'local/show-args',
      source: 'command',
      command: { program: 'sh', args: ['-c', 'printf "%s|" "$@" > args.out; cat "$3" >> args.out', 'sh'] },
      inputSchema: { type: 'object' },
      readOnly: false,
      writes: true,
    };
    write(sb.root, '-n', 'dash file\n');
    const r = await run({ args: ['--flag', 'v'], paths: ['a.txt', '-n', path.join(sb.root, 'src/b.ts')] }, { tool });
    assert.equal(r.ok, true, r.summary + r.output);
    assert.equal(read(sb.root, 'args.out'), `--flag|v|a.txt|./-n|src/b.ts|${read(sb.root, 'a.txt')}`);
    assert.deepEqual(r.filesTouched, ['args.out'], 'the file written before the call is not reported');
  });

  it('honours a command tool time limit', async () => {
    const tool: ToolDefinition = {
      name: 'local/slow',
      source: 'command',
      command: { program: 'sleep', args: ['30'], timeoutMs: 200 },
      inputSchema: { type: 'object' },
      readOnly: true,
      writes: false,
    };
    const r = await run({}, { tool });
    assert.match(r.summary, /200 ms time limit/);
  });
});
