/**
 * End to end: what the built CLI prints and how it exits where it used to mislead — a wrong
 * `--server` path, a closed output pipe, `plan use` without names, and successes that printed
 * nothing (an empty diff, nothing to prune, login and logout in plain mode).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { e2eRoot, localMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-output-e2e');
const TOKEN = 'e2e-output-token-0123456789abcdefgh';

const said = (r: CliResult): string => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe('a wrong --server path and a closed pipe', () => {
  let server: HttpServerProcess;
  before(async () => {
    const dataDir = join(ROOT, 'server');
    server = await startHttpServer({ dataDir, token: TOKEN, env: cliEnv(dataDir, join(ROOT, 'no-config')) });
  });
  after(() => server?.stop());
  const { cli } = localMode({ root: ROOT });

  it("a server URL with a path the server does not serve says the server's hint and exits 6", async () => {
    const r = await cli.run(['--server', `${server.baseUrl}/wrong`, '--token', TOKEN, 'health']);
    assert.equal(r.code, 6, said(r));
    assert.match(r.stderr, /^error: no JSON-RPC endpoint at \S+\/wrong \(HTTP 404\): not found \(TransportError\)$/m);
    assert.match(
      r.stderr,
      new RegExp(
        `^hint: JSON-RPC is served at POST /a2a; the Agent Card at /.well-known/agent-card.json; pass the server's base URL: --server ${server.baseUrl.replace(/\/$/, '')}$`,
        'm',
      ),
    );
    const json = await cli.json(['--server', `${server.baseUrl}/wrong`, '--token', TOKEN, 'health'], { code: 6 });
    assert.match(json.data.error.hint, /JSON-RPC is served at POST \/a2a/);
  });

  /** `agents …` whose reader has gone: its stdout (and stderr) closed before it writes. */
  const closedPipes = async (args: string[], closeStderr: boolean): Promise<CliResult> => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cliEnv(join(ROOT, 'pipe'), join(ROOT, 'no-config')),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    if (closeStderr) child.stderr.destroy();
    return collect(child, { timeoutMs: 30_000 });
  };

  it('a closed stdout pipe ends quietly with exit 0, for --version and for a command', async () => {
    for (const args of [['--version'], ['--help'], ['tool', 'list'], ['--format', 'json', 'tool', 'list']]) {
      const r = await closedPipes(args, false);
      assert.equal(r.code, 0, `${args.join(' ')}: ${said(r)}`);
      assert.doesNotMatch(r.stderr, /EPIPE|Error/, args.join(' '));
    }
  });

  it('a closed stderr pipe too (agents … 2>&1 | head) ends with exit 0', async () => {
    // tool list writes its summary line on stderr.
    const r = await closedPipes(['tool', 'list'], true);
    assert.equal(r.code, 0, said(r));
  });

  it('login and logout in plain mode say what they did', async () => {
    // A config directory of its own: the stored login must not send the other tests to the server.
    const cli = agentsCli({ dataDir: join(ROOT, 'login'), configHome: join(ROOT, 'login-config') });
    const login = await cli.run(['login', '--server', server.baseUrl], { input: `${TOKEN}\n`, code: 0 });
    assert.match(login.stderr, /^logged in to \S+ as admin \(administrator\); stored in \S+credentials\S*$/m);
    const logout = await cli.run(['logout'], { code: 0 });
    assert.match(logout.stderr, /^logged out of http:\/\/127\.0\.0\.1:\d+$/m);
    const again = await cli.run(['logout'], { code: 0 });
    assert.equal(again.stderr, 'not logged in\n');
  });
});

describe('plan commands that say what happened', () => {
  const { cli } = localMode({ root: ROOT, cli: { timeoutMs: 60_000 } });

  it('plan use without names asks for the action and the project, in those words (exit 2)', async () => {
    const r = await cli.run(['plan', 'use'], { code: 2 });
    assert.doesNotMatch(r.stderr, /names/);
    assert.match(r.stderr, /^error: plan use: name the action and the project it works on$/m);
    assert.match(r.stderr, /^hint: agents plan use <action> <project\.\.\.> \(see agents action list/m);
    const one = await cli.run(['plan', 'use', 'builtin/replace'], { code: 2 });
    assert.match(one.stderr, /^error: plan use: name the project that builtin\/replace works on$/m);
    const goal = await cli.run(['plan', 'use', '--goal', 'tidy up'], { code: 2 });
    assert.match(goal.stderr, /^error: plan use --goal: name the project the goal is for$/m);
    const help = await cli.run(['plan', 'use', '--help'], { code: 0 });
    assert.match(help.stdout, /^Usage: agents plan use \[options\] <action> <project\.\.\.>/m);
  });

  it('an empty diff and nothing to prune each say so in plain mode', async () => {
    const repo = join(ROOT, 'repo');
    initRepo(repo, { 'a.txt': 'colour\n' });
    await cli.run(['resource', 'add', 'git-checkout', 'out', '--path', repo, '--branch', 'main'], { code: 0 });
    await cli.run(['project', 'create', 'out', '--resource', 'out'], { code: 0 });
    const used = await cli.ok([
      'plan',
      'use',
      'builtin/replace',
      'out',
      '--arg',
      'pattern=colour',
      '--arg',
      'replacement=color',
      '--arg',
      'glob=*.txt',
    ]);
    const id = used.plan.planId as string;
    const diff = await cli.run(['plan', 'diff', id], { code: 0 });
    assert.equal(diff.stdout, '');
    assert.equal(diff.stderr, `no changes yet: plan ${id} has not executed\n`);
    const prune = await cli.run(['plan', 'prune', '--dry-run'], { code: 0 });
    assert.equal(prune.stdout, '');
    assert.match(prune.stderr, /^nothing to prune \(dry run\): no applied or cancelled plans older than the limit$/m);
  });
});
