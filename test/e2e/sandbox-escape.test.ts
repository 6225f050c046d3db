/**
 * End to end, through the built CLI with the real bubblewrap (issue #35, point 6): a plan's
 * confined command tries to leave its sandbox — read /etc/shadow (the agent runs as root here), list
 * /home, /root, /srv, /var, /run, /mnt, read another plan's sandbox and another workspace, connect
 * to host UNIX sockets the test opened (a path one under /tmp and under /run, an abstract one) —
 * and each attempt fails, as the command itself reports in the file it leaves for `plan diff`; the
 * listeners see no connection. What must work still does (sh, node, git status in the sandbox), a
 * toolchain named by CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS becomes visible read-only, and
 * `agents serve --read-only-path` shows it in diagnostics.
 */
import assert from 'node:assert/strict';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, startupErrorLine, TOKEN } from '../support/harness.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-escape-e2e');
const DATA = join(ROOT, 'data');
const TOOLCHAIN = join(ROOT, 'toolchain');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), timeoutMs: 60_000 });
const OTHER_SECRET = 'ANOTHER TENANT SECRET 0123456789';

/**
 * What the confined command runs: each attempt prints `name: outcome` (an error code, or what it
 * read), the sockets last, all into out.txt — which the plan's diff then shows.
 */
const PROBE = String.raw`
const fs = require('fs');
const net = require('net');
const { execFileSync } = require('child_process');
const [pathSock, runSock, abstractName, otherSandbox, otherRepo, toolchain] = process.argv.slice(2);
const lines = [];
const say = (k, v) => lines.push(k + ': ' + v);
const attempt = (k, f) => {
  try { say(k, 'GOT ' + JSON.stringify(String(f()).trim().slice(0, 200))); } catch (e) { say(k, e.code || e.message); }
};
const run = (p, args) => execFileSync(p, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
attempt('read /etc/shadow', () => fs.readFileSync('/etc/shadow', 'utf8'));
for (const d of ['/home', '/root', '/srv', '/var', '/run', '/mnt']) attempt('list ' + d, () => fs.readdirSync(d).join(','));
attempt('list another sandbox', () => fs.readdirSync(otherSandbox).join(','));
attempt('read another workspace', () => fs.readFileSync(otherRepo + '/SECRET.txt', 'utf8'));
attempt('run the toolchain', () => run(toolchain + '/bin/hello', []));
attempt('write the toolchain', () => (fs.writeFileSync(toolchain + '/x', 'x'), 'wrote'));
attempt('sh', () => run('sh', ['-c', 'echo ok']));
attempt('node -e', () => run(process.execPath, ['-e', 'console.log(6 * 7)']));
attempt('git status', () => run('git', ['status', '--porcelain', '--untracked-files=no']) || 'clean');
const connect = (k, p) =>
  new Promise((done) => {
    const s = net.connect(p);
    s.on('connect', () => { say(k, 'CONNECTED'); s.destroy(); done(); });
    s.on('error', (e) => { say(k, e.code); done(); });
  });
(async () => {
  await connect('connect a socket under /tmp', pathSock);
  await connect('connect a socket under /run', runSock);
  await connect('connect an abstract socket', '\0' + abstractName);
  fs.writeFileSync('out.txt', lines.join('\n') + '\n');
})();
`;

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

async function project(name: string, files: Record<string, string>, settings?: Record<string, unknown>) {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, files);
  await cli.run(['resource', 'add', 'git-checkout', `local/${name}`, '--path', repo, '--branch', 'main'], { code: 0 });
  const file = join(ROOT, `${name}.project.yaml`);
  writeFileSync(file, JSON.stringify({ name: `local/${name}`, resources: [`local/${name}`], settings }));
  await cli.run(['project', 'add', '--config', file], { code: 0 });
  return repo;
}

/** Runs `command` as a plan of `project`; returns the plan id. */
async function runPlan(name: string, command: string, extra: Record<string, string> = {}): Promise<string> {
  const used = await cli.run(
    ['--format', 'json', 'plan', 'use', 'builtin/run-command', `local/${name}`, '--arg', `command=${command}`],
    { code: 0, env: extra },
  );
  const id = String((JSON.parse(used.stdout) as { data: { plan: { planId: string } } }).data.plan.planId);
  await cli.run(['plan', 'execute', id], { code: 0, env: extra });
  return id;
}

/** What the probe reported: `name → outcome`, from the lines out.txt adds in the plan's diff. */
async function report(id: string): Promise<Map<string, string>> {
  const diff = (await cli.run(['plan', 'diff', id], { code: 0 })).stdout;
  const out = new Map<string, string>();
  for (const m of diff.matchAll(/^\+([^:\n]+): (.*)$/gm)) out.set(m[1] ?? '', m[2] ?? '');
  assert.ok(out.size > 0, `the probe left no report:\n${diff}`);
  return out;
}

/**
 * What a confined command lists in `dir`: nothing (ENOENT), unless the Node.js running the agent is
 * installed under it outside the system dirs (~/.node24 on these machines): then only the way there.
 */
const NODE_REAL = realpathSync(process.execPath);
const listingOf = (dir: string): string =>
  NODE_REAL.startsWith(`${dir}/`) ? `GOT ${JSON.stringify(NODE_REAL.slice(dir.length + 1).split('/')[0])}` : 'ENOENT';

describe('a confined command cannot leave its sandbox (real bubblewrap, through the CLI)', () => {
  const connections: string[] = [];
  const servers: net.Server[] = [];
  const pathSock = join(ROOT, 'host.sock');
  // Under /run where this user may write there (as root, like a database's or a container engine's socket).
  const runSock = writable('/run') ? `/run/ca-escape-${process.pid}.sock` : join(ROOT, 'run.sock');
  const abstractName = `ca-escape-${process.pid}`;
  let otherRepo = '';
  let otherSandbox = '';
  let probeCommand = '';

  before(async () => {
    const listen = (where: string) =>
      new Promise<void>((resolve, reject) => {
        const s = net.createServer((c) => {
          connections.push(where);
          // The probe hangs up at once: a reset is expected.
          c.on('error', () => {});
          c.end('hello\n');
        });
        s.once('error', reject);
        s.listen(where, () => resolve());
        servers.push(s);
      });
    await listen(pathSock);
    await listen(runSock);
    await listen(`\0${abstractName}`);
    mkdirSync(join(TOOLCHAIN, 'bin'), { recursive: true });
    writeFileSync(join(TOOLCHAIN, 'bin', 'hello'), '#!/bin/sh\necho hello from the toolchain\n');
    chmodSync(join(TOOLCHAIN, 'bin', 'hello'), 0o755);

    otherRepo = await project('other', { 'SECRET.txt': `${OTHER_SECRET}\n` });
    await project('mine', { 'probe.cjs': PROBE });
    await project('open', { 'probe.cjs': PROBE }, { network: 'allow' });
    // Another plan, with a sandbox of its own, before ours runs.
    const otherId = await runPlan('other', "sh -c 'cat SECRET.txt > copy.txt'");
    otherSandbox = join(DATA, 'sandboxes', otherId);
    assert.ok(existsSync(otherSandbox) && readdirSync(otherSandbox).length > 0, 'the other plan has a sandbox');
    probeCommand = [
      process.execPath,
      'probe.cjs',
      pathSock,
      runSock,
      abstractName,
      otherSandbox,
      otherRepo,
      TOOLCHAIN,
    ].join(' ');
  });
  after(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    rmSync(runSock, { force: true });
  });

  it('reads, listings and socket connections outside the sandbox all fail; sh, node and git status work', async () => {
    const seen = await report(await runPlan('mine', probeCommand));
    assert.equal(seen.get('read /etc/shadow'), 'ENOENT');
    for (const d of ['/home', '/root', '/srv', '/var', '/run', '/mnt'])
      assert.equal(seen.get(`list ${d}`), listingOf(d), d);
    assert.equal(seen.get('list another sandbox'), 'ENOENT');
    assert.equal(seen.get('read another workspace'), 'ENOENT');
    assert.equal(seen.get('connect a socket under /tmp'), 'ENOENT');
    assert.equal(seen.get('connect a socket under /run'), 'ENOENT');
    assert.equal(seen.get('connect an abstract socket'), 'ECONNREFUSED');
    assert.deepEqual(connections, [], 'a host listener was reached');
    // Not named by the setting: the toolchain is not there at all.
    assert.equal(seen.get('run the toolchain'), 'ENOENT');
    assert.equal(seen.get('sh'), 'GOT "ok"');
    assert.equal(seen.get('node -e'), 'GOT "42"');
    assert.equal(seen.get('git status'), 'GOT "clean"');
    // The same reads from outside succeed (so the assertions above can fail).
    assert.ok(existsSync('/etc/shadow') && existsSync(join(otherRepo, 'SECRET.txt')));
  });

  it('a toolchain in CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS is visible, read-only; the rest stays hidden', async () => {
    const extra = { CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS: TOOLCHAIN };
    const seen = await report(await runPlan('mine', probeCommand, extra));
    assert.equal(seen.get('run the toolchain'), 'GOT "hello from the toolchain"');
    assert.equal(seen.get('write the toolchain'), 'EROFS');
    assert.equal(existsSync(join(TOOLCHAIN, 'x')), false);
    assert.equal(seen.get('read another workspace'), 'ENOENT');
    assert.equal(seen.get('read /etc/shadow'), 'ENOENT');
  });

  it("with network: allow the command shares the host's network: an abstract socket answers, a path one still does not", async () => {
    const before = connections.length;
    const seen = await report(await runPlan('open', probeCommand));
    // Documented (README, Confinement): `allow` is the host's network namespace, abstract sockets included.
    assert.equal(seen.get('connect an abstract socket'), 'CONNECTED');
    assert.equal(seen.get('connect a socket under /tmp'), 'ENOENT');
    assert.equal(seen.get('connect a socket under /run'), 'ENOENT');
    assert.deepEqual(connections.slice(before), [`\0${abstractName}`]);
  });

  it('agents serve --read-only-path: diagnostics lists it among what a command sees; a bad one stops the start', async () => {
    const dataDir = join(ROOT, 'server-data');
    const server = await startHttpServer({ dataDir, args: ['--read-only-path', TOOLCHAIN] });
    try {
      const res = await fetch(`${server.baseUrl}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_cleveragents/diagnostics/run', params: {} }),
      });
      const body = (await res.json()) as { result: { checks: { name: string; detail: string }[] } };
      const check = body.result.checks.find((c) => c.name === 'command confinement');
      assert.ok(check, JSON.stringify(body));
      assert.match(check.detail, new RegExp(`toolchains: ${TOOLCHAIN} \\(confinement\\.readOnlyPaths\\)`));
      assert.match(check.detail, /\/etc: passwd, /);
    } finally {
      await server.stop();
    }
    const bad = await cli.run([
      'serve',
      '--port',
      '0',
      '--read-only-path',
      'relative/dir',
      '--read-only-path',
      TOOLCHAIN,
    ]);
    assert.equal(bad.code, 2);
    const line = startupErrorLine(bad.stderr);
    assert.equal(line.msg, 'the read-only path "relative/dir" (--read-only-path) is not an absolute path');
    assert.match(line.hint, /--read-only-path \/opt\/go/);
    const hidden = await cli.run(['serve', '--stdio'], {
      env: {
        CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS: `${TOOLCHAIN}:${DATA}`,
      },
    });
    assert.equal(hidden.code, 2);
    assert.match(
      hidden.stderr,
      /the read-only path ".*\/data" \(CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS\) is inside .*, which commands never see/,
    );
  });
});
