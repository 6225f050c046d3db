/**
 * builtin/bash is a shell, so the confinement is its only barrier: with the real bubblewrap, what
 * a shell line tries outside the sandbox must fail as it does for run-command. Under /var/tmp, as
 * in confinement.test.ts (the sandbox's private /tmp would hide anything planted in /tmp).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { CommandOutputChunk, SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import { git, rmrf, write } from '../fixtures/repos.ts';
import { builtin } from './coding-tools.fixture.ts';

const varTmp = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(`/var/tmp/ca-${prefix}-`));

describe('bash, confined (bubblewrap)', () => {
  let home: string;
  let data: string;
  let repo: string;
  let outside: string;
  let sb: SandboxInfo;
  let runner: BuiltinToolRunner;
  const bash = (
    command: string,
    opts: { network?: 'none' | 'allow'; onOutput?: (c: CommandOutputChunk) => void } = {},
  ): Promise<ToolCallResult> =>
    runner.run({
      tool: builtin('bash'),
      args: { command },
      sandbox: sb,
      signal: new AbortController().signal,
      timeoutMs: 20_000,
      network: opts.network ?? 'none',
      onOutput: opts.onOutput,
    });

  before(async () => {
    home = varTmp('home');
    data = varTmp('data');
    outside = varTmp('outside');
    write(outside, 'keep.txt', 'untouched\n');
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
    const confinement = await CommandConfinement.probe({ mode: 'bubblewrap', home, secrets: [data] });
    assert.equal(confinement.mode, 'bubblewrap', `bubblewrap must work here: ${confinement.describe()}`);
    runner = new BuiltinToolRunner({ confinement });
  });
  after(() => rmrf(home, data, repo, outside));

  it('works inside: pipes, && and cd, writing in the sandbox, output streamed', async () => {
    const chunks: string[] = [];
    const r = await bash('mkdir -p d && cd d && echo hi | tr a-z A-Z > out.txt && cat out.txt', {
      onOutput: (c) => chunks.push(c.text),
    });
    assert.equal(r.ok, true, r.summary + r.output);
    assert.equal(r.confinement, 'confined');
    assert.equal(r.output, 'HI\n');
    assert.equal(chunks.join(''), 'HI\n');
    assert.deepEqual(r.filesTouched, ['d/out.txt']);
  });

  it('cannot write outside the sandbox: not elsewhere, not the user repository, not its git metadata', async () => {
    const head = git(repo, 'rev-parse', 'HEAD');
    const r = await bash(
      [
        `echo pwned > ${outside}/keep.txt`,
        `echo pwned > ${outside}/new.txt`,
        `echo pwned > ${repo}/a.txt`,
        `echo pwned > ${repo}/.git/HEAD`,
        `cd ${outside} && touch there.txt`,
        'echo done',
      ].join('; '),
    );
    assert.match(r.output, /done\n$/);
    assert.match(r.output, /(Read-only file system|No such file or directory|Permission denied)/);
    assert.deepEqual(fs.readdirSync(outside), ['keep.txt']);
    assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'untouched\n');
    assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
  });

  it('has no network under policy none, and has it when the policy allows', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.end('hello\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    // bash's own /dev/tcp: no other program needed to try a connection.
    const line = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
    try {
      const denied = await bash(line);
      assert.equal(denied.ok, false);
      assert.match(denied.output, /Connection refused|Network is unreachable|connect/i);
      assert.equal(connections, 0);
      const allowed = await bash(line, { network: 'allow' });
      assert.equal(allowed.output, 'hello\n', allowed.summary + allowed.output);
      assert.equal(connections, 1);
    } finally {
      server.close();
    }
  });
});
