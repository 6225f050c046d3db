/**
 * A team member's story with a `git-remote` resource, end to end (issue #40): the built CLI
 * against a real `agents serve`, and a bare repository served on loopback by `git daemon`. The
 * member (not the administrator) adds the remote: an internal host the administrator has not
 * allowlisted is refused until the namespace holds private-network; a plan on it executes in the
 * server's clone and its apply pushes the plan's branch to the remote. A second resource pushes
 * to the target branch: when someone else pushed first, apply is refused naming `plan rebase`,
 * nothing changes on either side, and after the rebase the apply lands on top of their commit.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, cliEnv, cliPerson, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { startGitDaemon, type GitDaemon } from '../support/git-daemon.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { e2eRoot } from '../support/modes.ts';
import { findKey } from '../support/team-server.ts';

const ROOT = e2eRoot('agents-git-remote-e2e');
const ADMIN = 'git-remote-e2e-admin-token-0123456789abcdef';
const SERVED = join(ROOT, 'served');
const BARE = join(SERVED, 'app.git');
const T = ['--tenant', 'team'];

const bare = (...args: string[]): string =>
  execFileSync('git', ['--git-dir', BARE, ...args], { encoding: 'utf8' }).trimEnd();
const failed = (r: CliResult, code: number, what: string): string => {
  assert.equal(r.code, code, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stderr;
};

/** Someone else's commit pushed straight to the remote's main. */
function pushedByOthers(file: string, content: string): string {
  const work = join(ROOT, `other-${file.replace(/\W/g, '-')}`);
  execFileSync('git', ['clone', '-q', BARE, work]);
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', work, '-c', 'user.name=other', '-c', 'user.email=o@example.invalid', ...args], {
      encoding: 'utf8',
    }).trimEnd();
  writeFileSync(join(work, file), content);
  git('commit', '-q', '-am', `other: ${file}`);
  git('push', '-q', 'origin', 'main');
  return git('rev-parse', 'HEAD');
}

describe('a member works on a git-remote resource through a team server', () => {
  let daemon: GitDaemon;
  let server: HttpServerProcess;
  const admin = cliPerson(ROOT, 'admin');
  const alice = cliPerson(ROOT, 'alice');

  /** A deterministic plan on `project` (colour → color in src/), executed. */
  async function executedPlan(project: string): Promise<string> {
    const used = await alice.ok([
      ...T,
      'plan',
      'use',
      'builtin/replace',
      project,
      '--arg',
      'pattern=colour',
      '--arg',
      'replacement=color',
      '--arg',
      'glob=src/**/*.ts',
    ]);
    const id = used.plan.planId as string;
    await alice.ok([...T, 'plan', 'execute', id]);
    return id;
  }

  before(async () => {
    const seed = join(ROOT, 'seed');
    initRepo(seed, { 'src/a.ts': 'const colour = 1;\nexport { colour };\n', 'README.md': '# colour\n' });
    execFileSync('git', ['clone', '-q', '--bare', seed, BARE]);
    daemon = await startGitDaemon(SERVED);
    // Only the daemon's own address and port are allowlisted (none of the tests' defaults).
    server = await startHttpServer({
      dataDir: join(ROOT, 'server'),
      token: ADMIN,
      args: ['--allow-egress', `127.0.0.1:${daemon.port}`],
      env: cliEnv(join(ROOT, 'server'), join(ROOT, 'server-config'), {
        CLEVERAGENTS_ALLOW_EGRESS: '',
        CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0',
      }),
    });
    await admin.ok(['login', '--server', server.baseUrl], `${ADMIN}\n`);
    await admin.ok(['namespace', 'create', 'team']);
    const key = findKey(await admin.ok(['user', 'add', 'alice']));
    assert.ok(key, 'user add shows the first key');
    await admin.ok(['namespace', 'add-member', 'team', 'alice', '--role', 'member']);
    await alice.ok(['login', '--server', server.baseUrl], `${key}\n`);
  });
  after(async () => {
    await server?.stop();
    await daemon?.close();
  });

  it('an internal host nobody allowed is refused until the namespace holds private-network; the plan branch then arrives at the remote', async () => {
    // localhost is loopback, and only 127.0.0.1:<port> is allowlisted.
    const url = daemon.url('app.git', 'localhost');
    const add = ['resource', 'add', 'git-remote', 'team/review', '--url', url, '--branch', 'main'];
    const refused = failed(await alice.run([...T, ...add]), 4, 'add without the grant');
    assert.match(refused, /egress to localhost is refused: it resolves to (127\.0\.0\.1|::1), a loopback address/);
    assert.match(refused, /namespace team does not hold the private-network capability/);
    assert.match(refused, /agents namespace grant team private-network/);
    failed(await alice.run([...T, 'resource', 'show', 'team/review']), 3, 'nothing was added');

    await admin.ok(['namespace', 'grant', 'team', 'private-network']);
    const added = await alice.ok([...T, ...add]);
    assert.equal(added.name, 'team/review');
    await alice.ok([...T, 'project', 'create', 'team/review', '--resource', 'team/review']);
    const before = bare('rev-parse', 'main');
    const id = await executedPlan('team/review');
    const diff = await alice.run([...T, 'plan', 'diff', id]);
    assert.match(diff.stdout, /^\+const color = 1;$/m, diff.stderr);

    const applied = await alice.run([...T, 'plan', 'apply', id, '--yes']);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(
      applied.stdout,
      new RegExp(
        `^Pushed to team/review, branch cleveragents/plan-${id} on the remote: commit [0-9a-f]{12} \\(1 file\\)$`,
        'm',
      ),
    );
    // push: branch (the default): the plan's branch for review, one commit on main's tip; main untouched.
    const branch = `cleveragents/plan-${id}`;
    assert.equal(bare('log', '--format=%s', branch, '-1'), 'Replace /colour/ with "color" in src/**/*.ts');
    assert.equal(bare('rev-parse', `${branch}^`), before);
    assert.equal(bare('show', `${branch}:src/a.ts`), 'const color = 1;\nexport { color };');
    assert.equal(bare('rev-parse', 'main'), before);
    const status = await alice.ok([...T, 'plan', 'status', id]);
    assert.equal(`${status.phase}/${status.state}`, 'apply/applied');
  });

  it('push: target after someone else pushed is refused naming plan rebase, changes nothing, and lands after the rebase', async () => {
    // The allowlisted address: no grant needed for it (the administrator allowed it for everyone).
    await admin.ok(['namespace', 'revoke', 'team', 'private-network']);
    await alice.ok([
      ...T,
      'resource',
      'add',
      'git-remote',
      'team/main',
      '--url',
      daemon.url('app.git'),
      '--branch',
      'main',
      '--push',
      'target',
    ]);
    await alice.ok([...T, 'project', 'create', 'team/main', '--resource', 'team/main']);
    const id = await executedPlan('team/main');
    const diffBefore = (await alice.run([...T, 'plan', 'diff', id])).stdout;
    const theirs = pushedByOthers('README.md', '# colour, by someone else\n');
    const refs = bare('for-each-ref', '--format=%(refname) %(objectname)');

    const apply = await alice.run([...T, 'plan', 'apply', id, '--yes']);
    const stderr = failed(apply, 10, 'apply after the remote moved');
    assert.match(stderr, /main of team\/main moved on the remote since the plan's base/);
    assert.match(stderr, /nothing was pushed/);
    assert.match(stderr, new RegExp(`^hint: .*agents plan rebase ${id}`, 'm'));
    assert.equal(bare('for-each-ref', '--format=%(refname) %(objectname)'), refs, 'the remote is unchanged');
    assert.equal((await alice.run([...T, 'plan', 'diff', id])).stdout, diffBefore, 'the plan is unchanged');
    const refusedStatus = await alice.ok([...T, 'plan', 'status', id]);
    assert.equal(`${refusedStatus.phase}/${refusedStatus.state}`, 'apply/errored');
    assert.equal(refusedStatus.error.kind, 'conflict');

    const rebase = await alice.run([...T, 'plan', 'rebase', id]);
    assert.equal(rebase.code, 0, rebase.stderr);
    const landed = await alice.run([...T, 'plan', 'apply', id, '--yes']);
    assert.equal(landed.code, 0, landed.stderr);
    assert.match(landed.stdout, /^Pushed to team\/main, branch main on the remote: commit [0-9a-f]{12} \(1 file\)$/m);
    assert.equal(bare('rev-parse', 'main^'), theirs, 'on top of their commit');
    assert.equal(bare('show', 'main:src/a.ts'), 'const color = 1;\nexport { color };');
    assert.equal(bare('show', 'main:README.md'), '# colour, by someone else');
    assert.equal(bare('for-each-ref', '--format=%(refname)', `refs/heads/cleveragents/plan-${id}`), '');
  });
});

describe('a git-remote in local mode', () => {
  const cli = agentsCli({ dataDir: join(ROOT, 'local'), configHome: join(ROOT, 'local-config') });

  it('refuses the URL forms a server refuses (no egress guard here: the machine is yours)', async () => {
    for (const [url, why] of [
      ['file:///etc/secret.git', /file URLs are refused \(only https, http, git\)/],
      ['ext::sh', /git's transport helpers \("ext::"\) are refused/],
      ['ssh://-oProxyCommand=x/r', /ssh URLs are refused/],
      ['github.com:o/r.git', /host:path ssh addresses are refused/],
      ['https://me:token@example.com/r.git', /must not hold a user name or password: store the token as a secret/],
    ] as const) {
      const stderr = failed(await cli.run(['resource', 'add', 'git-remote', 'bad', '--url', url]), 7, url);
      assert.match(stderr, /^field: url: /m, url);
      assert.match(stderr, why, url);
    }
    assert.equal((await cli.ok(['resource', 'list'])).totalSize, 0, 'nothing was added');
    // An internal host needs no grant or allowlist in local mode.
    const added = await cli.ok(['resource', 'add', 'git-remote', 'lan', '--url', 'git://127.0.0.1:9418/app.git']);
    assert.equal(added.name, 'local/lan');
  });
});
