/**
 * End to end: a plan's command keeps its output — a `builtin/run-command` step that fails with
 * stdout and stderr shows both in `plan execute`'s summary, `plan status` (rich, plain and JSON,
 * the JSON whole), `plan explain` and `plan explain --output`, in local mode and over HTTP.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { Agents, CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot, localMode, serverMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-plan-output');

/** Thirty numbered lines on stdout, then one on stderr, then exit 3. */
const COMMAND = `sh -c 'for i in $(seq 1 30); do echo out $i; done; echo err >&2; exit 3'`;
const WHOLE = `${Array.from({ length: 30 }, (_, i) => `out ${i + 1}`).join('\n')}\nerr\n`;

/** A plan whose one step ran COMMAND and failed: its id and the step's decision. */
async function failedPlan(t: Agents, name: string): Promise<{ id: string; decision: string; executed: CliResult }> {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, { 'README.md': '# output\n' });
  for (const args of [
    ['resource', 'add', 'git-checkout', name, '--path', repo, '--branch', 'main'],
    ['project', 'create', name, '--resource', name],
  ]) {
    const r = await t.run(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
  const used = await t.ok(['plan', 'use', 'builtin/run-command', name, '--arg', `command=${COMMAND}`]);
  const id = used.plan.planId as string;
  const executed = await t.run(['--format', 'plain', 'plan', 'execute', id]);
  const tree = await t.ok(['plan', 'tree', id]);
  const decision = tree.decisions[0].children.find((d: { type: string }) => d.type === 'step').id as string;
  return { id, decision, executed };
}

function scenario(cli: Agents): void {
  let plan: { id: string; decision: string; executed: CliResult };
  before(async () => {
    plan = await failedPlan(cli, `p${Math.random().toString(36).slice(2, 8)}`);
  });

  it('the failed execute ends with what the command said', () => {
    const { executed } = plan;
    assert.notEqual(executed.code, 0, executed.stdout);
    assert.match(executed.stdout, /^last command: step 1 builtin\/run-command FAILED: .*exit 3$/m);
    assert.match(executed.stdout, /^output: out 12\\nout 13\\n.*\\nout 30\\nerr$/m);
  });

  it('plan status shows stdout and stderr (the last lines, and how to see all); its JSON carries all of it', async () => {
    const { id, decision } = plan;
    const plain = await cli.run(['--format', 'plain', 'plan', 'status', id]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^output: out 12\\n.*\\nout 30\\nerr$/m);
    assert.match(
      plain.stdout,
      new RegExp(
        `^output more: last 20 of 31 lines — all of it: agents plan explain ${decision} --plan ${id} --output$`,
        'm',
      ),
    );
    const rich = await cli.run(['--format', 'rich', 'plan', 'status', id]);
    assert.match(rich.stdout, /^ {2}output +out 12\n +out 13\n(?: +out \d+\n)+ +err\n/m);
    const s = await cli.ok(['plan', 'status', id]);
    assert.equal(s.state, 'errored');
    assert.deepEqual(s.lastCommand.output, { text: WHOLE, bytes: Buffer.byteLength(WHOLE), truncated: false });
    assert.equal(s.lastCommand.exitCode, 3);
    assert.equal(s.lastCommand.step, 1);
    assert.equal(s.lastCommand.decisionId, decision);
  });

  it('plan explain shows the call’s output; --output prints all of it, nothing else', async () => {
    const { id, decision } = plan;
    const shown = await cli.run(['--format', 'plain', 'plan', 'explain', decision, '--plan', id]);
    assert.match(shown.stdout, /^tool call: builtin\/run-command FAILED: .*exit 3 \(\d+ ms\)$/m);
    assert.match(shown.stdout, /^output: out 12\\n.*\\nerr$/m);
    const all = await cli.run(['plan', 'explain', decision, '--plan', id, '--output']);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, WHOLE);
    const e = await cli.ok(['plan', 'explain', decision, '--plan', id]);
    assert.equal(e.toolCalls[0].output.text, WHOLE);
  });
}

describe('a command’s output in plans, local mode', { concurrency: 1 }, () => {
  scenario(localMode({ root: ROOT, cli: { timeoutMs: 60_000 } }).cli);
});

describe('a command’s output in plans, over HTTP', { concurrency: 1 }, () => {
  scenario(serverMode({ root: ROOT, cli: { timeoutMs: 60_000 } }).cli);
});
