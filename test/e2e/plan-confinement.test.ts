/**
 * End to end, through the built CLI in local mode: a plan's commands run confined (the issue's
 * reproduction: `env > env.txt` must not put the server's token or an API key in the plan's
 * diff), the choice of network and confinement is shown by `plan status` and recorded in each tool
 * call; without bubblewrap commands are refused saying how to install it; `confinement: none`
 * works and is shown.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-confine-e2e-'));
const SERVER_TOKEN = 'e2e-confine-server-token-0123456789';
const API_KEY = 'sk-e2e-confine-0123456789';

function env(dataDir: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  // The server's secrets are in the agent's environment on purpose: no command may see them.
  return cliEnv(dataDir, join(ROOT, 'no-config'), {
    CLEVERAGENTS_SERVER_TOKEN: SERVER_TOKEN,
    OPENAI_API_KEY: API_KEY,
    ...extra,
  });
}

function cli(dataDir: string, args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: env(dataDir, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, { timeoutMs: 60_000 });
}

async function json(dataDir: string, args: string[], extra: Record<string, string> = {}): Promise<any> {
  const res = await cli(dataDir, ['--format', 'json', ...args], extra);
  try {
    return JSON.parse(res.stdout).data;
  } catch {
    throw new Error(`not one JSON envelope (exit ${res.code}):\n${res.stdout}\n${res.stderr}`);
  }
}

function makeRepo(name: string): string {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, { 'README.md': '# hello\n' });
  return repo;
}

/** A fresh data dir with `local/<name>` registered (project settings as given). */
async function setup(name: string, settings?: Record<string, unknown>): Promise<string> {
  const dataDir = join(ROOT, `data-${name}`);
  const repo = makeRepo(name);
  assert.equal(
    (await cli(dataDir, ['resource', 'add', 'git-checkout', `local/${name}`, '--path', repo, '--branch', 'main'])).code,
    0,
  );
  const file = join(ROOT, `${name}.project.yaml`);
  writeFileSync(
    file,
    JSON.stringify({ name: `local/${name}`, resources: [`local/${name}`], ...(settings ? { settings } : {}) }),
  );
  const res = await cli(dataDir, ['project', 'add', '--config', file]);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  return dataDir;
}

/** use + execute of builtin/run-command; returns the plan id and the execute result. */
async function runPlan(
  dataDir: string,
  project: string,
  command: string,
  extra: Record<string, string> = {},
): Promise<{ id: string; execute: CliResult }> {
  const used = await json(
    dataDir,
    ['plan', 'use', 'builtin/run-command', project, '--arg', `command=${command}`],
    extra,
  );
  const id = String(used.plan.planId);
  const execute = await cli(dataDir, ['--format', 'json', 'plan', 'execute', id], extra);
  return { id, execute };
}

describe('confined plan commands, through the CLI', () => {
  let server: net.Server;
  let port = 0;
  before(async () => {
    server = net.createServer((s) => s.end('hello\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => {
    server.close();
    rmSync(ROOT, { recursive: true, force: true });
  });

  const connect = (): string =>
    `${process.execPath} -e "require('net').connect(${port},'127.0.0.1').on('data',d=>{require('fs').writeFileSync('net.txt','got '+d)}).on('error',e=>{require('fs').writeFileSync('net.txt',e.code)})"`;

  it("the issue's reproduction: env > env.txt puts neither the server token nor an API key in the diff", async () => {
    const dataDir = await setup('repro');
    const { id, execute } = await runPlan(dataDir, 'local/repro', "sh -c 'env > env.txt'");
    assert.equal(execute.code, 0, execute.stdout + execute.stderr);
    const diff = await cli(dataDir, ['plan', 'diff', id]);
    assert.match(diff.stdout, /\+HOME=\/tmp\/home/);
    assert.ok(!diff.stdout.includes(SERVER_TOKEN), 'the server token is in the diff');
    assert.ok(!diff.stdout.includes(API_KEY), 'the API key is in the diff');

    const status = await json(dataDir, ['plan', 'status', id]);
    assert.equal(status.network, 'none');
    assert.equal(status.confinement, 'confined');
    const text = (await cli(dataDir, ['--format', 'plain', 'plan', 'status', id])).stdout;
    assert.match(text, /^network: none$/m);
    assert.match(text, /^confinement: confined \(bubblewrap\)$/m);
    const tree = await json(dataDir, ['plan', 'tree', id]);
    type Node = { id: string; type: string; children: Node[] };
    const steps = (nodes: Node[]): Node[] =>
      nodes.flatMap((n) => [...(n.type === 'step' ? [n] : []), ...steps(n.children)]);
    const step = steps(tree.decisions as Node[])[0];
    assert.ok(step);
    const explained = await json(dataDir, ['plan', 'explain', step.id]);
    assert.equal(explained.toolCalls[0].network, 'none');
    assert.equal(explained.toolCalls[0].confinement, 'confined');
  });

  it('no network by default; a project with network: allow reaches 127.0.0.1, and status says so', async () => {
    const closed = await setup('closed');
    const a = await runPlan(closed, 'local/closed', connect());
    assert.equal(a.execute.code, 0, a.execute.stdout);
    assert.match((await cli(closed, ['plan', 'diff', a.id])).stdout, /\+(ECONNREFUSED|ENETUNREACH)/);

    const open = await setup('open', { network: 'allow' });
    const b = await runPlan(open, 'local/open', connect());
    assert.equal(b.execute.code, 0, b.execute.stdout);
    assert.match((await cli(open, ['plan', 'diff', b.id])).stdout, /\+got hello/);
    assert.equal((await json(open, ['plan', 'status', b.id])).network, 'allow');
    assert.match((await cli(open, ['--format', 'plain', 'plan', 'status', b.id])).stdout, /^network: allowed$/m);
  });

  it('without bubblewrap the command is refused with how to install it, and nothing ran', async () => {
    const dataDir = await setup('nobwrap');
    const missing = { CLEVERAGENTS_BWRAP: join(ROOT, 'no-such-bwrap') };
    const { id, execute } = await runPlan(dataDir, 'local/nobwrap', "sh -c 'echo ran > ran.txt'", missing);
    assert.notEqual(execute.code, 0);
    const status = await json(dataDir, ['plan', 'status', id], missing);
    assert.equal(status.state, 'errored');
    assert.match(status.error.message, /commands are refused: .*no-such-bwrap is not installed/);
    assert.match(status.error.message, /apt-get install bubblewrap/);
    assert.doesNotMatch((await cli(dataDir, ['plan', 'diff', id], missing)).stdout, /ran\.txt/);
  });

  it('CLEVERAGENTS_CONFINEMENT=none runs the command unconfined, and every view of the plan shows it', async () => {
    const dataDir = await setup('none');
    const none = { CLEVERAGENTS_CONFINEMENT: 'none', CLEVERAGENTS_BWRAP: join(ROOT, 'no-such-bwrap') };
    const { id, execute } = await runPlan(dataDir, 'local/none', "sh -c 'echo ran > ran.txt'", none);
    assert.equal(execute.code, 0, execute.stdout + execute.stderr);
    assert.match((await cli(dataDir, ['plan', 'diff', id])).stdout, /\+ran/);
    // Shown afterwards too, by a process that itself is confined again.
    assert.equal((await json(dataDir, ['plan', 'status', id])).confinement, 'none');
    assert.match(
      (await cli(dataDir, ['--format', 'plain', 'plan', 'status', id])).stdout,
      /^confinement: NONE — commands ran unconfined \(CLEVERAGENTS_CONFINEMENT=none\)$/m,
    );
    const bad = await cli(dataDir, ['serve', '--stdio'], { CLEVERAGENTS_CONFINEMENT: 'off' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /CLEVERAGENTS_CONFINEMENT must be bubblewrap or none/);
  });
});
