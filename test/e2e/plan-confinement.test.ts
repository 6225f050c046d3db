/**
 * End to end, through the built CLI in local mode: a plan's commands run confined (the issue's
 * reproduction: `env > env.txt` must not put the server's token or an API key in the plan's
 * diff), the choice of network and confinement is shown by `plan status` and recorded in each tool
 * call; without bubblewrap commands are refused saying how to install it; `confinement: none`
 * works and is shown.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, type Agents, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-confine-e2e');
const SERVER_TOKEN = 'e2e-confine-server-token-0123456789';
const API_KEY = 'sk-e2e-confine-0123456789';

function makeRepo(name: string): string {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, { 'README.md': '# hello\n' });
  return repo;
}

/** A fresh data dir with `local/<name>` registered (project settings as given): the CLI on it. */
async function setup(name: string, settings?: Record<string, unknown>): Promise<Agents> {
  const cli = agentsCli({
    dataDir: join(ROOT, `data-${name}`),
    configHome: join(ROOT, 'no-config'),
    // The server's secrets are in the agent's environment on purpose: no command may see them.
    env: { CLEVERAGENTS_SERVER_TOKEN: SERVER_TOKEN, OPENAI_API_KEY: API_KEY },
    timeoutMs: 60_000,
  });
  const repo = makeRepo(name);
  assert.equal(
    (await cli.run(['resource', 'add', 'git-checkout', `local/${name}`, '--path', repo, '--branch', 'main'])).code,
    0,
  );
  const file = join(ROOT, `${name}.project.yaml`);
  writeFileSync(
    file,
    JSON.stringify({ name: `local/${name}`, resources: [`local/${name}`], ...(settings ? { settings } : {}) }),
  );
  const res = await cli.run(['project', 'add', '--config', file]);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  return cli;
}

/** use + execute of builtin/run-command; returns the plan id and the execute result. */
async function runPlan(
  cli: Agents,
  project: string,
  command: string,
  extra: Record<string, string> = {},
): Promise<{ id: string; execute: CliResult }> {
  const used = (
    await cli.json(['plan', 'use', 'builtin/run-command', project, '--arg', `command=${command}`], { env: extra })
  ).data;
  const id = String(used.plan.planId);
  const execute = await cli.run(['--format', 'json', 'plan', 'execute', id], { env: extra });
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
  });

  const connect = (): string =>
    `${process.execPath} -e "require('net').connect(${port},'127.0.0.1').on('data',d=>{require('fs').writeFileSync('net.txt','got '+d)}).on('error',e=>{require('fs').writeFileSync('net.txt',e.code)})"`;

  it("the issue's reproduction: env > env.txt puts neither the server token nor an API key in the diff", async () => {
    const cli = await setup('repro');
    const { id, execute } = await runPlan(cli, 'local/repro', "sh -c 'env > env.txt'");
    assert.equal(execute.code, 0, execute.stdout + execute.stderr);
    const diff = await cli.run(['plan', 'diff', id]);
    assert.match(diff.stdout, /\+HOME=\/tmp\/home/);
    assert.ok(!diff.stdout.includes(SERVER_TOKEN), 'the server token is in the diff');
    assert.ok(!diff.stdout.includes(API_KEY), 'the API key is in the diff');

    const status = (await cli.json(['plan', 'status', id])).data;
    assert.equal(status.network, 'none');
    assert.equal(status.confinement, 'confined');
    const text = (await cli.run(['--format', 'plain', 'plan', 'status', id])).stdout;
    assert.match(text, /^network: none$/m);
    assert.match(text, /^confinement: confined \(bubblewrap\)$/m);
    const tree = (await cli.json(['plan', 'tree', id])).data;
    type Node = { id: string; type: string; children: Node[] };
    const steps = (nodes: Node[]): Node[] =>
      nodes.flatMap((n) => [...(n.type === 'step' ? [n] : []), ...steps(n.children)]);
    const step = steps(tree.decisions as Node[])[0];
    assert.ok(step);
    const explained = (await cli.json(['plan', 'explain', step.id])).data;
    assert.equal(explained.toolCalls[0].network, 'none');
    assert.equal(explained.toolCalls[0].confinement, 'confined');
  });

  it('no network by default; a project with network: allow reaches 127.0.0.1, and status says so', async () => {
    const closed = await setup('closed');
    const a = await runPlan(closed, 'local/closed', connect());
    assert.equal(a.execute.code, 0, a.execute.stdout);
    assert.match((await closed.run(['plan', 'diff', a.id])).stdout, /\+(ECONNREFUSED|ENETUNREACH)/);

    const open = await setup('open', { network: 'allow' });
    const b = await runPlan(open, 'local/open', connect());
    assert.equal(b.execute.code, 0, b.execute.stdout);
    assert.match((await open.run(['plan', 'diff', b.id])).stdout, /\+got hello/);
    assert.equal((await open.json(['plan', 'status', b.id])).data.network, 'allow');
    assert.match((await open.run(['--format', 'plain', 'plan', 'status', b.id])).stdout, /^network: allowed$/m);
  });

  it('without bubblewrap the command is refused with how to install it, and nothing ran', async () => {
    const cli = await setup('nobwrap');
    const missing = { CLEVERAGENTS_BWRAP: join(ROOT, 'no-such-bwrap') };
    const { id, execute } = await runPlan(cli, 'local/nobwrap', "sh -c 'echo ran > ran.txt'", missing);
    assert.notEqual(execute.code, 0);
    const status = (await cli.json(['plan', 'status', id], { env: missing })).data;
    assert.equal(status.state, 'errored');
    assert.match(status.error.message, /commands are refused: .*no-such-bwrap is not installed/);
    assert.match(status.error.message, /apt-get install bubblewrap/);
    assert.doesNotMatch((await cli.run(['plan', 'diff', id], { env: missing })).stdout, /ran\.txt/);
  });

  it('CLEVERAGENTS_CONFINEMENT=none runs the command unconfined, and every view of the plan shows it', async () => {
    const cli = await setup('none');
    const none = { CLEVERAGENTS_CONFINEMENT: 'none', CLEVERAGENTS_BWRAP: join(ROOT, 'no-such-bwrap') };
    const { id, execute } = await runPlan(cli, 'local/none', "sh -c 'echo ran > ran.txt'", none);
    assert.equal(execute.code, 0, execute.stdout + execute.stderr);
    assert.match((await cli.run(['plan', 'diff', id])).stdout, /\+ran/);
    // Shown afterwards too, by a process that itself is confined again.
    assert.equal((await cli.json(['plan', 'status', id])).data.confinement, 'none');
    assert.match(
      (await cli.run(['--format', 'plain', 'plan', 'status', id])).stdout,
      /^confinement: NONE — commands ran unconfined \(CLEVERAGENTS_CONFINEMENT=none\)$/m,
    );
    const bad = await cli.run(['serve', '--stdio'], { env: { CLEVERAGENTS_CONFINEMENT: 'off' } });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /CLEVERAGENTS_CONFINEMENT must be bubblewrap or none/);
  });
});
