/**
 * Escape attempts against confined commands (issue #16), with the real bubblewrap and real
 * processes: each must fail, and the allowed path (writing in the sandbox, git in the worktree)
 * must still work. Everything lives under /var/tmp, not /tmp: the sandbox's private /tmp would hide
 * secrets planted in /tmp anyway, and the masks themselves are what is tested here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { git, read, rmrf, write } from '../fixtures/repos.ts';
import { waitUntil } from '../fixtures/processes.ts';
import { runConfined } from '../../../../src/infrastructure/tools/process-runner.ts';

const runCommand = BUILTIN_TOOLS.find((t) => t.name === 'builtin/run-command') as ToolDefinition;
const API_KEY = 'sk-test-0123456789-do-not-leak';
const SERVER_TOKEN = 'server-token-0123456789abcdef';
const MIB = 1024 * 1024;

const varTmp = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(`/var/tmp/ca-${prefix}-`));

/** Pids of running processes whose command line contains `marker` (zombies excluded). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) continue;
      if (/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${d}/stat`, 'utf8'))) continue;
      out.push(Number(d));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

describe('confined commands (bubblewrap)', () => {
  let home: string;
  let data: string;
  let repo: string;
  let outside: string;
  let config: string;
  let tokenElsewhere: string;
  let sb: SandboxInfo;
  let confinement: CommandConfinement;
  let runner: BuiltinToolRunner;

  const run = (
    args: Record<string, unknown>,
    opts: { network?: 'none' | 'allow'; signal?: AbortSignal; timeoutMs?: number; with?: BuiltinToolRunner } = {},
  ): Promise<ToolCallResult> =>
    (opts.with ?? runner).run({
      tool: runCommand,
      args,
      sandbox: sb,
      signal: opts.signal ?? new AbortController().signal,
      timeoutMs: opts.timeoutMs ?? 20_000,
      network: opts.network ?? 'none',
    });
  const sh = (script: string, opts: Parameters<typeof run>[1] = {}): Promise<ToolCallResult> =>
    run({ program: 'sh', args: ['-c', script] }, opts);

  before(async () => {
    home = varTmp('home');
    write(home, '.ssh/id_ed25519', 'PRIVATE KEY MATERIAL\n');
    write(home, '.aws/credentials', '[default]\naws_secret_access_key=AWSSECRET\n');
    write(home, '.netrc', 'machine example.com password NETRCSECRET\n');
    config = path.join(home, '.config', 'cleveragents');
    write(config, 'config.yaml', `token: ${SERVER_TOKEN}\n`);
    data = varTmp('data');
    write(data, 'server-token', `${SERVER_TOKEN}\n`);
    outside = varTmp('outside');
    tokenElsewhere = path.join(outside, 'token-file');
    write(outside, 'token-file', `${SERVER_TOKEN}\n`);
    repo = varTmp('repo');
    git(repo, 'init', '-q', '-b', 'main');
    write(repo, 'a.txt', 'one\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    sb = await new GitSandboxManager({ root: path.join(data, 'sandboxes') }).create('P1', {
      name: 'local/app',
      type: 'git-checkout',
      path: repo,
    });
    confinement = await CommandConfinement.probe({
      mode: 'bubblewrap',
      home,
      secrets: [config, data, tokenElsewhere],
      // 2 GiB of address space: Node 24 reserves about 1.5 GiB before it runs a line (Node 20: 1 GiB).
      limits: { maxProcesses: 32, memoryBytes: 2048 * MIB, maxOutputBytes: 4 * MIB },
      serverEnv: { ...process.env, OPENAI_API_KEY: API_KEY, CLEVERAGENTS_SERVER_TOKEN: SERVER_TOKEN, LC_ALL: 'C' },
    });
    assert.equal(confinement.mode, 'bubblewrap', `bubblewrap must work here: ${confinement.describe()}`);
    runner = new BuiltinToolRunner({ confinement });
  });
  after(() => rmrf(home, data, repo, outside));

  it('the allowed path works: writes in the sandbox, git status in the worktree, the sandbox as cwd', async () => {
    const r = await sh('pwd; echo ok > f; git status --porcelain');
    assert.equal(r.ok, true, r.summary + r.output);
    assert.equal(r.confinement, 'confined');
    assert.equal(read(sb.root, 'f'), 'ok\n');
    assert.deepEqual(r.filesTouched, ['f']);
    assert.equal(r.output, `${sb.root}\n?? f\n`);
    fs.rmSync(path.join(sb.root, 'f'));
  });

  it('cannot write outside the sandbox: not the user repository, not its git metadata, not elsewhere', async () => {
    const before = git(repo, 'rev-parse', 'HEAD');
    // Read-only: what the view shows (the repository's git metadata, /etc, the root itself); absent:
    // the rest of the host (another directory, the home, the repository's files).
    const targets: [string, RegExp][] = [
      [path.join(outside, 'x'), /Directory nonexistent/],
      [path.join(repo, 'a.txt'), /Read-only file system/],
      [path.join(repo, '.git', 'HEAD'), /Read-only file system/],
      [path.join(sb.root, '.git'), /Read-only file system/],
      [path.join(home, 'x'), /Directory nonexistent/],
      ['/etc/cleveragents-x', /Read-only file system/],
      ['/cleveragents-x', /Read-only file system/],
    ];
    for (const [t, why] of targets) {
      const r = await sh(`echo pwned > '${t}'`);
      assert.equal(r.ok, false, `wrote ${t}`);
      assert.match(r.output, why, t);
    }
    assert.equal(fs.existsSync(path.join(outside, 'x')), false);
    assert.equal(read(repo, 'a.txt'), 'one\n');
    assert.equal(git(repo, 'rev-parse', 'HEAD'), before);
    assert.match(read(sb.root, '.git'), /^gitdir: /);
    // What it writes in its private /tmp is gone afterwards.
    assert.equal((await sh('echo t > /tmp/left-behind; cat /tmp/left-behind')).output, 't\n');
    assert.equal(fs.existsSync('/tmp/left-behind'), false);
  });

  it('cannot read the user secrets, the config and state directories, or the token file', async () => {
    const r = await sh(
      [
        `cat '${home}/.ssh/id_ed25519' '${home}/.aws/credentials' '${home}/.netrc'`,
        `cat '${config}/config.yaml' '${data}/server-token' '${tokenElsewhere}'`,
        `ls -A '${home}/.ssh' '${data}'`,
        'echo done',
      ].join('; '),
    );
    assert.doesNotMatch(r.output, /PRIVATE KEY|AWSSECRET|NETRCSECRET/);
    assert.ok(!r.output.includes(SERVER_TOKEN), r.output);
    assert.match(r.output, /No such file or directory/);
    assert.match(r.output, /done\n$/);
    // The same reads unconfined would see them (so the assertions above can fail).
    const plain = await sh(`cat '${home}/.ssh/id_ed25519' '${tokenElsewhere}'`, {
      with: new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() }),
    });
    assert.match(plain.output, /PRIVATE KEY/);
  });

  it('does not see the server environment: no API key, no server token; HOME is an empty sandbox home', async () => {
    const r = await run({ program: 'env' });
    assert.equal(r.ok, true, r.summary);
    assert.ok(!r.output.includes(API_KEY) && !r.output.includes(SERVER_TOKEN), r.output);
    const names = r.output
      .trim()
      .split('\n')
      .map((l) => l.split('=')[0])
      .sort();
    assert.deepEqual(
      names.filter((n) => !['TERM', 'TZ', 'LANG', 'LANGUAGE'].includes(n ?? '')),
      ['GIT_TERMINAL_PROMPT', 'HOME', 'LC_ALL', 'PATH', 'PWD', 'TMPDIR'],
    );
    assert.match(r.output, /^HOME=\/tmp\/home$/m);
    assert.equal((await sh('ls -A "$HOME"; touch "$HOME/x" && echo writable')).output, 'writable\n');
    const declared = await runner.run({
      tool: runCommand,
      args: { program: 'sh', args: ['-c', 'echo "$MY_SETTING"'] },
      sandbox: sb,
      signal: new AbortController().signal,
      timeoutMs: 5000,
      env: { MY_SETTING: 'declared by the action' },
    });
    assert.equal(declared.output, 'declared by the action\n');
  });

  it('cannot connect to a server on 127.0.0.1 unless the network is allowed', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.end('hello\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const script = `const s=require('net').connect(${port},'127.0.0.1');s.on('data',d=>{process.stdout.write('got '+d);process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(3)})`;
    try {
      const r = await run({ program: process.execPath, args: ['-e', script] });
      assert.equal(r.ok, false);
      assert.match(r.output, /ECONNREFUSED|ENETUNREACH/);
      assert.equal(connections, 0);
      const allowed = await run({ program: process.execPath, args: ['-e', script] }, { network: 'allow' });
      assert.equal(allowed.output, 'got hello\n', allowed.summary + allowed.output);
      assert.equal(connections, 1);
    } finally {
      server.close();
    }
  });

  it('cannot signal a process outside (its own PID namespace)', async () => {
    const victim = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const pid = victim.pid ?? 0;
      const r = await sh(`kill -9 ${pid} && echo killed; ps -e -o pid= | wc -l`);
      assert.doesNotMatch(r.output, /killed/);
      assert.match(r.output, /No such process/);
      assert.equal(processesWith('sleep\u000060').includes(pid), true, 'the process outside is still running');
    } finally {
      victim.kill('SIGKILL');
    }
  });

  it('a fork bomb ends with the command: nothing it started survives (bounded, 5 s)', async () => {
    const marker = '31.4159';
    const r = await sh(`i=0; while [ $i -lt 200 ]; do sleep ${marker} & i=$((i+1)); done; wait`, { timeoutMs: 3000 });
    assert.equal(r.ok, false);
    assert.ok(await waitUntil(() => processesWith(`sleep\u0000${marker}`).length === 0, 2000), 'sleepers left');
  });

  it('a fork bomb hits the process limit, and says so (where a pids cgroup is writable)', async (t) => {
    if (!confinement.boundsProcesses) return t.skip('no writable pids cgroup here: the process count is not bounded');
    const marker = '32.7182';
    const r = await sh(`i=0; while [ $i -lt 200 ]; do sleep ${marker} & i=$((i+1)); done; wait`, {
      timeoutMs: 10_000,
    });
    assert.equal(r.ok, false, r.summary);
    assert.match(r.summary, /the process limit \(32 processes\) was reached/);
    assert.ok(await waitUntil(() => processesWith(`sleep\u0000${marker}`).length === 0, 2000));
  });

  it('a memory hog fails at the memory limit, and says so', async () => {
    const hog = `const a=[];for(let i=0;i<16;i++)a.push(Buffer.alloc(256*1024*1024,1));console.log('allocated')`;
    const r = await run({ program: process.execPath, args: ['-e', hog] });
    assert.equal(r.ok, false);
    assert.doesNotMatch(r.output, /allocated/);
    assert.match(r.summary, /the memory limit \(2048 MiB of address space\) was reached/);
  });

  it('100 MB of output: killed at the output limit, promptly, keeping the head and the tail', async () => {
    const r = await sh('echo START; head -c 100000000 /dev/zero | tr "\\0" x; echo END');
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, null);
    assert.match(r.summary, /killed at the output limit \(4 MiB of output\)/);
    assert.match(r.output, /^START\n/);
    assert.doesNotMatch(r.output, /END/);
    assert.ok(Buffer.byteLength(r.output) <= MIB + 100);
  });

  it('cancelling kills the whole PID namespace, including what the command left in the background', async () => {
    const marker = '33.1234';
    const ac = new AbortController();
    const started = waitUntil(() => processesWith(`sleep\u0000${marker}`).length >= 2, 5000).then(() => ac.abort());
    const r = await sh(`(setsid sleep ${marker} &); sleep ${marker} & wait`, { signal: ac.signal });
    await started;
    assert.match(r.summary, /cancelled/);
    assert.ok(await waitUntil(() => processesWith(`sleep\u0000${marker}`).length === 0, 2000), 'sleepers left');
  });

  it('a time limit kills the namespace: the summary says so, and nothing survives', async () => {
    const marker = '34.5678';
    const r = await sh(`(setsid sleep ${marker} &); sleep ${marker}`, { timeoutMs: 500 });
    assert.match(r.summary, /killed after the 500 ms time limit/);
    assert.ok(await waitUntil(() => processesWith(`sleep\u0000${marker}`).length === 0, 2000), 'sleepers left');
  });

  it('when the server dies, its confined commands die with it (--die-with-parent)', async () => {
    const marker = '35.8765';
    const script = [
      `import { CommandConfinement } from ${JSON.stringify(new URL('../../../../src/infrastructure/index.ts', import.meta.url).href)};`,
      `import { runConfined } from ${JSON.stringify(new URL('../../../../src/infrastructure/tools/process-runner.ts', import.meta.url).href)};`,
      `const c = await CommandConfinement.probe({ mode: 'bubblewrap', home: ${JSON.stringify(home)}, secrets: [] });`,
      `await runConfined(c, { program: 'sh', args: ['-c', '(setsid sleep ${marker} &); sleep ${marker}'], cwd: ${JSON.stringify(sb.root)}, sandboxRoot: ${JSON.stringify(sb.root)}, network: 'none' }, { timeoutMs: 60000, signal: new AbortController().signal });`,
    ].join('\n');
    const server = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    try {
      assert.ok(await waitUntil(() => processesWith(`sleep\u0000${marker}`).length >= 2, 10_000), 'never started');
      server.kill('SIGKILL');
      assert.ok(
        await waitUntil(() => processesWith(`sleep\u0000${marker}`).length === 0, 3000),
        'sleepers outlived the server',
      );
    } finally {
      server.kill('SIGKILL');
    }
  });

  it("extra writable dirs (the agent's own git in a sandbox) are read-write, and the sandbox's git metadata with them", async () => {
    const gitDir = path.join(repo, '.git');
    const script = `echo marker > '${gitDir}/ca-writable-probe' && echo wrote; ls '${outside}' 2>/dev/null || echo absent`;
    const r = await runConfined(
      confinement,
      { program: 'sh', args: ['-c', script], cwd: sb.root, sandboxRoot: sb.root, network: 'none', writable: [gitDir] },
      { timeoutMs: 20_000, signal: new AbortController().signal },
    );
    assert.equal(r.output.split('\n')[0], 'wrote', r.output);
    assert.match(r.output, /absent\n$/, 'the rest of the host stays out of the view');
    assert.equal(read(gitDir, 'ca-writable-probe'), 'marker\n');
    fs.rmSync(path.join(gitDir, 'ca-writable-probe'));
    // Without `writable` the same write is refused (so the assertion above can fail).
    const plain = await sh(`echo marker > '${gitDir}/ca-writable-probe'`);
    assert.match(plain.output, /Read-only file system/);
  });

  it('a program that does not exist is named', async () => {
    const r = await run({ program: 'no-such-program-cleveragents' });
    assert.equal(r.ok, false);
    assert.match(r.summary, /cannot run no-such-program-cleveragents: .*ENOENT/);
  });

  it('without bubblewrap commands are refused, saying how to install it; nothing runs', async () => {
    const missing = await CommandConfinement.probe({
      mode: 'bubblewrap',
      bwrapPath: '/nonexistent/bwrap',
      home,
      secrets: [],
    });
    assert.equal(missing.mode, 'unavailable');
    const refusing = new BuiltinToolRunner({ confinement: missing });
    assert.equal(await refusing.confinement(), 'unavailable');
    const r = await sh('echo ran > ran.txt', { with: refusing });
    assert.equal(r.ok, false);
    assert.match(
      r.summary,
      /commands are refused: .*\/nonexistent\/bwrap is not installed.*apt-get install bubblewrap/,
    );
    assert.match(r.summary, /CLEVERAGENTS_CONFINEMENT=none/);
    assert.equal(fs.existsSync(path.join(sb.root, 'ran.txt')), false);
    const check = missing.check();
    assert.equal(check.status, 'fail', 'diagnostics fails the confinement check');
    assert.match(check.hint ?? '', /apt-get install bubblewrap/);
  });

  it('confinement: none runs commands unconfined and says so, still with the allowlisted environment', async () => {
    const none = await CommandConfinement.probe({
      mode: 'none',
      bwrapPath: '/nonexistent/bwrap',
      home,
      secrets: [],
      serverEnv: { PATH: process.env['PATH'], OPENAI_API_KEY: API_KEY },
    });
    const plain = new BuiltinToolRunner({ confinement: none });
    assert.equal(await plain.confinement(), 'none');
    const r = await sh(`env; cat '${outside}/token-file'`, { with: plain });
    assert.equal(r.ok, true, r.summary);
    assert.equal(r.confinement, 'none');
    assert.ok(!r.output.includes(API_KEY));
    assert.ok(r.output.includes(SERVER_TOKEN), 'unconfined, the file is readable');
    assert.equal(none.check().status, 'warn', 'diagnostics warns that commands run unconfined');
    assert.equal(confinement.check().status, confinement.boundsProcesses ? 'ok' : 'warn');
  });
});
