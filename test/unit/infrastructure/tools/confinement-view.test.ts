/**
 * What a confined command sees of the host (issue #35): a minimal file system — the system's
 * program and library directories, a curated /etc, the configured toolchains — not `/` read-only.
 * With the real bubblewrap, and the pure parts (checking a configured path, finding the Node.js
 * installation) on their own. Everything lives under /var/tmp: the sandbox's private /tmp would
 * hide what is planted in /tmp anyway.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BuiltinToolRunner, CommandConfinement, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import {
  ETC_ENTRIES,
  buildSystemView,
  nodeInstallation,
  readOnlyPathProblem,
} from '../../../../src/infrastructure/tools/confinement-view.ts';
import type { SandboxInfo, ToolCallResult } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { git, rmrf, write } from '../fixtures/repos.ts';

const runCommand = BUILTIN_TOOLS.find((t) => t.name === 'builtin/run-command') as ToolDefinition;
const varTmp = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(`/var/tmp/ca-${prefix}-`));
const SYSTEM_DIRS = ['bin', 'sbin', 'lib', 'lib64', 'lib32', 'libx32'].filter((d) => fs.existsSync(`/${d}`));

function executable(dir: string, rel: string, script: string): string {
  write(dir, rel, `#!/bin/sh\n${script}\n`);
  const file = path.join(dir, rel);
  fs.chmodSync(file, 0o755);
  return file;
}

describe('what a confined command sees (bubblewrap)', () => {
  let home: string;
  let data: string;
  let repo: string;
  let outside: string;
  let toolchain: string;
  let linked: string;
  let sb: SandboxInfo;
  let plain: CommandConfinement;
  let withTools: CommandConfinement;
  /** Where the Node.js running these tests is installed, when outside the system dirs (~/.node24 here): commands see it. */
  let nodeDirs: string[];

  const sh = (script: string, c: CommandConfinement = plain): Promise<ToolCallResult> =>
    run({ program: 'sh', args: ['-c', script] }, c);
  const run = (args: Record<string, unknown>, c: CommandConfinement = plain): Promise<ToolCallResult> =>
    new BuiltinToolRunner({ confinement: c }).run({
      tool: runCommand,
      args,
      sandbox: sb,
      signal: new AbortController().signal,
      timeoutMs: 30_000,
      network: 'none',
    });

  before(async () => {
    home = varTmp('home');
    write(home, '.ssh/id_ed25519', 'PRIVATE KEY MATERIAL\n');
    executable(home, '.tools/bin/home-tool', 'echo home tool ran');
    data = varTmp('data');
    outside = varTmp('outside');
    executable(outside, 'bin/hidden-tool', 'echo hidden tool ran');
    write(outside, 'secret.txt', 'ANOTHER WORKSPACE\n');
    toolchain = varTmp('toolchain');
    executable(toolchain, 'bin/hello', 'echo hello from the toolchain');
    linked = path.join(outside, 'toolchain-link');
    fs.symlinkSync(toolchain, linked);
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
    const serverEnv = { PATH: `${outside}/bin:${linked}/bin:${home}/.tools/bin:/usr/local/bin:/usr/bin:/bin` };
    plain = await CommandConfinement.probe({ mode: 'bubblewrap', home, secrets: [data], serverEnv });
    nodeDirs = await nodeInstallation({ execPath: process.execPath, searchPath: serverEnv.PATH, home });
    withTools = await CommandConfinement.probe({
      mode: 'bubblewrap',
      home,
      secrets: [data],
      serverEnv,
      readOnlyPaths: [linked, home],
    });
    assert.equal(plain.mode, 'bubblewrap', plain.describe());
    assert.equal(withTools.mode, 'bubblewrap', withTools.describe());
  });
  after(() => rmrf(home, data, repo, outside, toolchain));

  it('the root holds the system dirs as on the host, /etc, /proc, /dev, /tmp, and only the way to the sandbox', async () => {
    const r = await sh('ls -A /; echo --; ls -A /var/tmp; echo --; for d in /bin /lib; do readlink $d; done');
    assert.equal(r.ok, true, r.summary + r.output);
    const [root = '', varTmpSeen = '', links = ''] = r.output.split('--\n');
    // /var only because this test's sandbox lives under /var/tmp: nothing in it but the way there.
    assert.deepEqual(
      root.trim().split('\n').sort(),
      [...new Set([...SYSTEM_DIRS, 'dev', 'etc', 'proc', 'tmp', 'usr', 'var', ...nodeDirs.map(topDir)])].sort(),
    );
    assert.deepEqual(varTmpSeen.trim().split('\n').sort(), [path.basename(data), path.basename(repo)].sort());
    const hostLinks = ['/bin', '/lib'].map((d) => (fs.lstatSync(d).isSymbolicLink() ? fs.readlinkSync(d) : ''));
    assert.equal(
      links,
      hostLinks
        .filter(Boolean)
        .map((l) => `${l}\n`)
        .join(''),
    );
  });

  it('no /home, /root, /srv, /run, /mnt, /opt, no other workspace, nothing of the home', async () => {
    const r = await sh(
      `for d in /home /root /srv /run /mnt /opt '${outside}' '${home}'; do ls -A "$d" || echo "absent $d"; done; cat '${outside}/secret.txt'; echo end`,
    );
    for (const d of ['/home', '/root', '/srv', '/run', '/mnt', '/opt', outside, home]) {
      // A directory on the way to the Node.js running the agent holds that way and nothing else.
      const way = nodeDirs.filter((n) => n.startsWith(`${d}/`)).map((n) => n.slice(d.length + 1).split('/')[0]);
      const expected = way.length ? `^${way.join('\\n')}$` : `^absent ${d}$`;
      assert.match(r.output, new RegExp(expected, 'm'), r.output);
    }
    assert.doesNotMatch(r.output, /ANOTHER WORKSPACE/);
    assert.match(r.output, /end\n$/);
  });

  it('/etc holds only the curated entries: no shadow, gshadow, sudoers, ssh, and TLS private keys hidden', async () => {
    const r = await sh(
      'ls -A /etc; echo --; cat /etc/shadow /etc/gshadow; ls -A /etc/ssl/private 2>/dev/null; echo end',
    );
    const [listed = '', rest = ''] = r.output.split('--\n');
    const seen = listed.trim().split('\n');
    const curated = ETC_ENTRIES.map(([name]) => name);
    assert.deepEqual(
      seen.filter((n) => !curated.includes(n)),
      [],
    );
    for (const n of ['passwd', 'group', 'hosts', 'nsswitch.conf'])
      if (fs.existsSync(`/etc/${n}`)) assert.ok(seen.includes(n), `${n} missing: ${listed}`);
    for (const n of ['shadow', 'gshadow', 'sudoers', 'ssh', 'npmrc']) assert.ok(!seen.includes(n), n);
    assert.match(rest, /\/etc\/shadow: No such file or directory/);
    assert.match(rest, /end\n$/);
    assert.equal(rest.replace(/^cat: .*\n/gm, ''), 'end\n', 'the private key directory is empty');
    assert.deepEqual([...(plain.view?.etc ?? [])].sort(), seen.sort());
  });

  it('common programs run: sh, node, npm, python3, git (status in the worktree), grep, sed, awk', async () => {
    const r = await sh(
      [
        'echo ok',
        `${process.execPath} -e 'console.log("node", typeof process.version)'`,
        'npm --version >/dev/null && echo npm',
        'if command -v python3 >/dev/null; then python3 -c "print(\'python\')"; else echo python; fi',
        'git status --porcelain && echo git',
        'echo abc | grep b | sed s/b/B/',
        'echo x | awk \'{print "awk"}\'',
      ].join(' && '),
    );
    assert.equal(r.ok, true, r.summary + r.output);
    assert.equal(r.output, 'ok\nnode string\nnpm\npython\ngit\naBc\nawk\n');
  });

  it('a toolchain in readOnlyPaths is seen read-only, by its path and its target; secrets under one stay masked', async () => {
    const script = [
      'hello',
      `'${toolchain}/bin/hello'`,
      'home-tool',
      `touch '${toolchain}/x' '${linked}/x' '${home}/x'`,
      `cat '${home}/.ssh/id_ed25519'`,
      `ls -A '${home}/.ssh'`,
      `ls '${outside}'`,
      'echo end',
    ].join('; ');
    const r = await sh(script, withTools);
    assert.match(r.output, /^hello from the toolchain\nhello from the toolchain\nhome tool ran\n/);
    assert.equal((r.output.match(/Read-only file system/g) ?? []).length, 3, r.output);
    assert.doesNotMatch(r.output, /PRIVATE KEY/);
    assert.match(r.output, /id_ed25519: No such file or directory/);
    // Only the link itself is in the view, not the directory holding it.
    assert.match(r.output, /Read-only file system\n(?:.*\n)*toolchain-link\nend\n$/);
    assert.ok(!fs.existsSync(path.join(toolchain, 'x')));
    // Without the setting neither is there.
    const without = await sh(`'${toolchain}/bin/hello' || echo absent`);
    assert.match(without.output, /absent\n$/);
  });

  it('secrets inside the work directory itself stay masked (a home registered as a resource)', async () => {
    write(sb.root, 'keys/id_ed25519', 'PRIVATE KEY MATERIAL\n');
    write(sb.root, 'token.txt', 'TOKEN MATERIAL\n');
    try {
      const c = await CommandConfinement.probe({
        mode: 'bubblewrap',
        home,
        secrets: [path.join(sb.root, 'keys'), path.join(sb.root, 'token.txt')],
      });
      const r = await sh('ls -A keys; cat token.txt; echo x > keys/y; echo end', c);
      assert.doesNotMatch(r.output, /PRIVATE KEY|TOKEN MATERIAL|id_ed25519/);
      assert.match(r.output, /Read-only file system/);
      assert.match(r.output, /end\n$/);
      assert.match((await sh('cat token.txt')).output, /TOKEN MATERIAL/, 'not a secret, it is seen');
    } finally {
      fs.rmSync(path.join(sb.root, 'keys'), { recursive: true });
      fs.rmSync(path.join(sb.root, 'token.txt'));
    }
  });

  it("a program on the server's PATH that a command cannot see is named as missing", async () => {
    const r = await run({ program: 'hidden-tool' });
    assert.equal(r.ok, false);
    assert.match(r.summary, /cannot run hidden-tool: .*ENOENT/);
    // Unconfined, the same PATH finds it (so the assertion above can fail).
    const found = await run(
      { program: 'hidden-tool' },
      CommandConfinement.unconfined({ serverEnv: { PATH: `${outside}/bin:/usr/bin:/bin` } }),
    );
    assert.equal(found.output, 'hidden tool ran\n', found.summary);
  });

  it('diagnostics says what a command sees, in one check', () => {
    const check = withTools.check();
    assert.notEqual(check.status, 'fail');
    assert.match(check.detail, /^bubblewrap \(/);
    assert.match(check.detail, /A command sees, read-only: \/usr, /);
    assert.match(check.detail, /; \/etc: passwd, group, /);
    assert.match(check.detail, new RegExp(`toolchains: ${linked} \\(confinement\\.readOnlyPaths\\), ${home} `));
    assert.match(
      check.detail,
      /read-write: its sandbox \(git metadata read-only\), a private \/tmp with HOME=\/tmp\/home/,
    );
    assert.match(check.detail, /no \/home, \/root, \/srv, \/var, \/run, \/mnt/);
    assert.match(
      check.detail,
      /network: none unless the plan allows it, and then the host network \(loopback and abstract UNIX sockets included\)/,
    );
    assert.match(
      plain.check().detail,
      nodeDirs.length
        ? new RegExp(`toolchains: ${nodeDirs[0]} \\(the Node.js running the agent\\);`)
        : /toolchains: none \(add them with --read-only-path\)/,
    );
  });
});

/** `/root` for `/root/.node24/lib/node_modules/node`. */
const topDir = (p: string): string => p.split('/')[1] ?? '';

describe('the view, piece by piece', () => {
  let dir: string;
  before(() => {
    dir = varTmp('view');
  });
  after(() => rmrf(dir));

  it('a configured read-only path must be an absolute directory, not /, not inside a hidden path', () => {
    write(dir, 'file.txt', 'x');
    fs.mkdirSync(path.join(dir, 'data', 'inner'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'ok'));
    const hidden = [path.join(dir, 'data')];
    assert.equal(readOnlyPathProblem('relative/dir', hidden), 'is not an absolute path');
    assert.equal(readOnlyPathProblem(path.join(dir, 'missing'), hidden), 'does not exist');
    assert.equal(readOnlyPathProblem(path.join(dir, 'file.txt'), hidden), 'is not a directory');
    assert.match(readOnlyPathProblem('/', hidden) ?? '', /whole file system/);
    assert.equal(
      readOnlyPathProblem(path.join(dir, 'data', 'inner'), hidden),
      `is inside ${path.join(dir, 'data')}, which commands never see`,
    );
    fs.symlinkSync(path.join(dir, 'data', 'inner'), path.join(dir, 'sneaky'));
    assert.match(readOnlyPathProblem(path.join(dir, 'sneaky'), hidden) ?? '', /is inside/);
    assert.equal(readOnlyPathProblem(path.join(dir, 'ok'), hidden), undefined);
  });

  it('system directories are never added twice; a path through a symlink is bound at its target and linked', async () => {
    fs.mkdirSync(path.join(dir, 'real'));
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    const view = await buildSystemView({ readOnlyPaths: ['/usr/local', `${dir}/link/`], runtimeDirs: ['/usr/lib'] });
    assert.deepEqual(view.readOnly, [{ path: `${dir}/link`, why: 'configured' }]);
    const args = view.args.join(' ');
    assert.match(args, new RegExp(`--ro-bind ${dir}/real ${dir}/real --symlink ${dir}/real ${dir}/link`));
    assert.doesNotMatch(args, /\/usr\/local|--ro-bind-try \/usr\/lib /);
    // TLS private keys stay hidden under the /etc/ssl shown (an empty read-only directory over them).
    if (fs.existsSync('/etc/ssl/private'))
      assert.match(args, /--tmpfs \/etc\/ssl\/private --remount-ro \/etc\/ssl\/private/);
    for (const d of SYSTEM_DIRS) {
      const link = fs.lstatSync(`/${d}`).isSymbolicLink();
      assert.match(
        args,
        new RegExp(link ? `--symlink ${fs.readlinkSync(`/${d}`)} /${d}( |$)` : `--ro-bind /${d} /${d}`),
      );
    }
  });

  it('the Node.js installation: two levels above the program and above the PATH link to it, never a home or /usr', async () => {
    const prefix = path.join(dir, 'home', '.node24');
    const program = executable(prefix, 'lib/node_modules/node/bin/node', 'exit 0');
    fs.mkdirSync(path.join(prefix, 'bin'));
    fs.symlinkSync('../lib/node_modules/node/bin/node', path.join(prefix, 'bin', 'node'));
    const home = path.join(dir, 'home');
    const find = (execPath: string, searchPath: string): Promise<string[]> =>
      nodeInstallation({ execPath, searchPath, home });
    // The PATH link's prefix holds the program's own, which is then not listed twice.
    assert.deepEqual(await find(program, `${dir}/nowhere:${prefix}/bin:/usr/bin`), [prefix]);
    // Another `node` first on PATH is not ours: only the program's own installation.
    executable(dir, 'other/bin/node', 'exit 0');
    assert.deepEqual(await find(program, `${dir}/other/bin:${prefix}/bin`), [
      path.join(prefix, 'lib', 'node_modules', 'node'),
    ]);
    const inHome = executable(home, 'bin/node', 'exit 0');
    assert.deepEqual(await find(inHome, ''), [], 'never the whole home');
    const top = executable(dir, 'node', 'exit 0');
    assert.deepEqual(await find(top, ''), [], 'not a bin directory');
    if (fs.existsSync('/usr/bin/node')) assert.deepEqual(await find('/usr/bin/node', '/usr/bin'), []);
  });
});
