/**
 * End to end: a plan's command keeps its output — a `builtin/run-command` step that fails with
 * stdout and stderr shows both in `plan execute`'s summary, `plan status` (rich, plain and JSON,
 * the JSON whole), `plan explain` and `plan explain --output`, in local mode and over HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-plan-output-'));
const TOKEN = 'e2e-plan-output-token-0123456789ab';
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** Thirty numbered lines on stdout, then one on stderr, then exit 3. */
const COMMAND = `sh -c 'for i in $(seq 1 30); do echo out $i; done; echo err >&2; exit 3'`;
const WHOLE = `${Array.from({ length: 30 }, (_, i) => `out ${i + 1}`).join('\n')}\nerr\n`;

interface Target {
  dataDir: string;
  server?: () => string;
}

function run(t: Target, args: string[]): Promise<CliResult> {
  const full = t.server ? ['--server', t.server(), '--token', TOKEN, ...args] : args;
  const child = spawn(process.execPath, [BIN, ...full], {
    env: cliEnv(t.dataDir, join(ROOT, 'no-config')),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, { timeoutMs: 60_000 });
}

async function json(t: Target, args: string[]): Promise<any> {
  const res = await run(t, ['--format', 'json', ...args]);
  assert.equal(res.code, 0, `agents ${args.join(' ')} → ${res.code}\n${res.stdout}\n${res.stderr}`);
  return JSON.parse(res.stdout).data;
}

/** A plan whose one step ran COMMAND and failed: its id and the step's decision. */
async function failedPlan(t: Target, name: string): Promise<{ id: string; decision: string; executed: CliResult }> {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, { 'README.md': '# output\n' });
  for (const args of [
    ['resource', 'add', 'git-checkout', name, '--path', repo, '--branch', 'main'],
    ['project', 'create', name, '--resource', name],
  ]) {
    const r = await run(t, args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
  const used = await json(t, ['plan', 'use', 'builtin/run-command', name, '--arg', `command=${COMMAND}`]);
  const id = used.plan.planId as string;
  const executed = await run(t, ['--format', 'plain', 'plan', 'execute', id]);
  const tree = await json(t, ['plan', 'tree', id]);
  const decision = tree.decisions[0].children.find((d: { type: string }) => d.type === 'step').id as string;
  return { id, decision, executed };
}

function scenario(target: () => Target): void {
  let plan: { id: string; decision: string; executed: CliResult };
  before(async () => {
    plan = await failedPlan(target(), `p${Math.random().toString(36).slice(2, 8)}`);
  });

  it('the failed execute ends with what the command said', () => {
    const { executed } = plan;
    assert.notEqual(executed.code, 0, executed.stdout);
    assert.match(executed.stdout, /^last command: step 1 builtin\/run-command FAILED: .*exit 3$/m);
    assert.match(executed.stdout, /^output: out 12\\nout 13\\n.*\\nout 30\\nerr$/m);
  });

  it('plan status shows stdout and stderr (the last lines, and how to see all); its JSON carries all of it', async () => {
    const { id, decision } = plan;
    const plain = await run(target(), ['--format', 'plain', 'plan', 'status', id]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^output: out 12\\n.*\\nout 30\\nerr$/m);
    assert.match(
      plain.stdout,
      new RegExp(
        `^output more: last 20 of 31 lines — all of it: agents plan explain ${decision} --plan ${id} --output$`,
        'm',
      ),
    );
    const rich = await run(target(), ['--format', 'rich', 'plan', 'status', id]);
    assert.match(rich.stdout, /^ {2}output +out 12\n +out 13\n(?: +out \d+\n)+ +err\n/m);
    const s = await json(target(), ['plan', 'status', id]);
    assert.equal(s.state, 'errored');
    assert.deepEqual(s.lastCommand.output, { text: WHOLE, bytes: Buffer.byteLength(WHOLE), truncated: false });
    assert.equal(s.lastCommand.exitCode, 3);
    assert.equal(s.lastCommand.step, 1);
    assert.equal(s.lastCommand.decisionId, decision);
  });

  it('plan explain shows the call’s output; --output prints all of it, nothing else', async () => {
    const { id, decision } = plan;
    const shown = await run(target(), ['--format', 'plain', 'plan', 'explain', decision, '--plan', id]);
    assert.match(shown.stdout, /^tool call: builtin\/run-command FAILED: .*exit 3 \(\d+ ms\)$/m);
    assert.match(shown.stdout, /^output: out 12\\n.*\\nerr$/m);
    const all = await run(target(), ['plan', 'explain', decision, '--plan', id, '--output']);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, WHOLE);
    const e = await json(target(), ['plan', 'explain', decision, '--plan', id]);
    assert.equal(e.toolCalls[0].output.text, WHOLE);
  });
}

describe('a command’s output in plans, local mode', { concurrency: 1 }, () => {
  scenario(() => ({ dataDir: join(ROOT, 'local') }));
});

describe('a command’s output in plans, over HTTP', { concurrency: 1 }, () => {
  let server: HttpServerProcess;
  before(async () => {
    const dataDir = join(ROOT, 'server');
    server = await startHttpServer({ dataDir, env: cliEnv(dataDir, join(ROOT, 'no-config')), token: TOKEN });
  });
  after(() => server.stop());
  scenario(() => ({ dataDir: join(ROOT, 'client-unused'), server: () => server.baseUrl }));
});
