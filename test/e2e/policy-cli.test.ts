/**
 * End to end: automation profiles as a registry through the built `agents` CLI (local mode, an
 * agent over stdio per call) — a deny rule stops a command before it runs, an ask rule makes an
 * allow-by-default profile ask for one command, plans keep the rules they started with, bad
 * profile files get located errors, and a profile a project uses cannot be removed.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { agentsCli, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-policy-e2e');
const DATA = join(ROOT, 'data');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), timeoutMs: 60_000 });

function expectCode(res: CliResult, code: number, what: string): void {
  assert.equal(res.code, code, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

const file = (name: string, text: string): string => {
  const p = join(ROOT, name);
  writeFileSync(p, text);
  return p;
};

function makeRepo(name: string): string {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, { 'src/a.ts': 'export const a = 1;\n' });
  return repo;
}

async function register(name: string, extra: string[] = []): Promise<string> {
  const repo = makeRepo(name);
  expectCode(
    await cli.run(['resource', 'add', 'git-checkout', name, '--path', repo, '--branch', 'main']),
    0,
    'resource',
  );
  expectCode(await cli.run(['project', 'create', name, '--resource', name, ...extra]), 0, 'project create');
  return repo;
}

async function use(action: string, project: string, extra: string[]): Promise<any> {
  const data = await cli.ok(['plan', 'use', action, project, ...extra]);
  assert.equal(`${data.plan.phase}/${data.plan.state}`, 'strategize/complete', JSON.stringify(data.plan.error));
  return data.plan;
}

const NO_RM = `name: local/no-rm
description: Everything runs, except deleting files
default: allow
rules:
  - command: "rm *"
    decision: deny
    reason: plans never delete files
`;

const ASK_GIT = `name: local/ask-git
description: Everything runs; git commands ask first
default: allow
applyApproval: true
rules:
  - tool: builtin/run-command
    command: "git *"
    decision: ask
    reason: git can rewrite history
`;

const TOUCH_THEN_GIT = `name: local/touch-then-git
descriptionTemplate: Make a file, then ask git
definitionOfDone: made.txt exists
steps:
  - id: touch
    tool: builtin/run-command
    args: { command: "touch made.txt" }
  - id: git
    tool: builtin/run-command
    args: { command: "git status --short" }
`;

describe('automation profiles through the CLI', { concurrency: 1 }, () => {
  before(async () => {
    expectCode(await cli.run(['automation-profile', 'add', '--config', file('no-rm.yaml', NO_RM)]), 0, 'add no-rm');
    expectCode(await cli.run(['automation-profile', 'add', '--config', file('ask-git.yaml', ASK_GIT)]), 0, 'add ask');
    expectCode(await cli.run(['action', 'add', '--config', file('tg.action.yaml', TOUCH_THEN_GIT)]), 0, 'action');
  });

  it('lists the built-ins and shows a profile rule by rule', async () => {
    const list = await cli.run(['automation-profile', 'list']);
    expectCode(list, 0, 'list');
    for (const row of [
      /^builtin\/auto\t1\tallow\tno approval\t0\t/m,
      /^builtin\/manual\t1\task\tasks\t1\t/m,
      /^builtin\/trusted\t1\tallow\tasks\t0\t/m,
      /^local\/no-rm\t1\tallow\tasks\t1\t/m,
    ])
      assert.match(list.stdout, row);
    const show = await cli.run(['automation-profile', 'show', 'no-rm']);
    expectCode(show, 0, 'show');
    assert.match(show.stdout, /^rule 1: deny command "rm \*" — plans never delete files$/m);
    assert.match(show.stdout, /^default: allow \(a call no rule matches\)$/m);
  });

  it('a deny rule: the command does not run, the step fails with the rule and reason, shown in status and explain', async () => {
    const repo = await register('deny');
    const plan = await use('builtin/run-command', 'deny', [
      '--arg',
      'command=rm src/a.ts',
      '--automation-profile',
      'no-rm',
    ]);
    assert.equal(plan.automationProfile, 'local/no-rm');
    const exec = await cli.run(['plan', 'execute', plan.planId]);
    assert.notEqual(exec.code, 0, 'execute fails');
    assert.match(
      exec.stderr + exec.stdout,
      /step 1 \(builtin\/run-command\) was not run: rule 1 of local\/no-rm \(command "rm \*"\) denies it — plans never delete files/,
    );

    const s = await cli.ok(['plan', 'status', plan.planId]);
    assert.equal(`${s.phase}/${s.state}`, 'execute/errored');
    assert.equal(s.error.kind, 'policy');
    assert.match(s.error.message, /rule 1 of local\/no-rm \(command "rm \*"\) denies it — plans never delete files/);
    assert.ok(existsSync(join(s.sandboxes[0].root, 'src', 'a.ts')), 'the file is still in the sandbox');
    assert.equal((await cli.ok(['plan', 'diff', plan.planId])).stats.files, 0, 'nothing changed');
    assert.equal(readFileSync(join(repo, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n');

    const text = await cli.run(['plan', 'status', plan.planId]);
    assert.match(
      text.stdout,
      /^profile: local\/no-rm \(rules as of plan use, revision 1: default allow, 1 rule, apply asks; later edits of the profile do not apply to this plan\)$/m,
    );
    assert.match(text.stdout, /^policy rule 1: deny command "rm \*" — plans never delete files$/m);

    const [step] = (await cli.ok(['plan', 'tree', plan.planId])).decisions[0].children;
    const explained = await cli.ok(['plan', 'explain', step.id]);
    assert.equal(explained.toolCalls.length, 1);
    assert.equal(explained.toolCalls[0].ok, false);
    assert.deepEqual(explained.toolCalls[0].policy.rule, {
      index: 0,
      command: 'rm *',
      reason: 'plans never delete files',
    });
    const explainText = await cli.run(['plan', 'explain', step.id]);
    assert.match(
      explainText.stdout,
      /^policy: denied by rule 1 of local\/no-rm \(deny command "rm \*" — plans never delete files\)$/m,
    );

    // The plan keeps the rules it was made with: allowing rm in the profile changes nothing for it.
    const relaxed = NO_RM.replace('decision: deny', 'decision: allow');
    expectCode(
      await cli.run(['automation-profile', 'update', 'no-rm', '--config', file('no-rm2.yaml', relaxed)]),
      0,
      'update',
    );
    const again = await cli.run(['plan', 'execute', plan.planId, '--yes']);
    assert.notEqual(again.code, 0, 'still denied, also with --yes');
    assert.ok(existsSync(join((await cli.ok(['plan', 'status', plan.planId])).sandboxes[0].root, 'src', 'a.ts')));
    expectCode(
      await cli.run(['automation-profile', 'update', 'no-rm', '--config', file('no-rm.yaml', NO_RM)]),
      0,
      'back',
    );
  });

  it('an ask rule makes an allow-by-default profile ask for one command only', async () => {
    await register('ask');
    const plan = await use('local/touch-then-git', 'ask', ['--automation-profile', 'local/ask-git']);
    const exec = await cli.run(['plan', 'execute', plan.planId]);
    expectCode(exec, 5, 'execute waits for the git step');
    assert.match(exec.stdout, /^Approve step 2\/2: builtin\/run-command command=git status --short/m);
    const s = await cli.ok(['plan', 'status', plan.planId]);
    assert.equal(s.progress.stepsDone, 1, 'step 1 ran without asking');
    assert.equal(s.waiting.request.policy.rule.index, 0);
    assert.ok(existsSync(join(s.sandboxes[0].root, 'made.txt')));
    expectCode(await cli.run(['plan', 'approve', plan.planId]), 0, 'approve');
    const done = await cli.ok(['plan', 'status', plan.planId]);
    assert.equal(`${done.phase}/${done.state}`, 'execute/complete');
  });

  it('refuses a bad profile file with file:line errors and writes nothing', async () => {
    const bad = file(
      'bad.yaml',
      'name: local/bad\ndefault: sometimes\nrules:\n  - command: "npm test"\n    decision: allow\n  - tool: "*"\n    decision: never\n',
    );
    const res = await cli.run(['automation-profile', 'add', '--config', bad]);
    expectCode(res, 7, 'add bad');
    assert.match(res.stderr, /bad\.yaml:2: default: must be allow, ask or deny/);
    assert.match(res.stderr, /bad\.yaml:7: rules\[1\]\.decision: must be allow, ask or deny/);
    expectCode(await cli.run(['automation-profile', 'show', 'bad']), 3, 'nothing was written');
  });

  it('a project names a profile: its plans use it, and the profile cannot be removed while the project does', async () => {
    await register('uses', ['--automation-profile', 'no-rm']);
    const plan = await use('builtin/run-command', 'uses', ['--arg', 'command=rm src/a.ts']);
    assert.equal(plan.automationProfile, 'local/no-rm');
    assert.equal(plan.policy.rules[0].decision, 'deny');
    const refused = await cli.run(['automation-profile', 'remove', 'no-rm']);
    expectCode(refused, 5, 'remove in use');
    assert.match(refused.stderr, /automation-profile local\/no-rm is used by project local\/uses/);
    expectCode(await cli.run(['automation-profile', 'show', 'no-rm']), 0, 'still there');
    const unknown = await cli.run([
      'plan',
      'use',
      'builtin/run-command',
      'uses',
      '--arg',
      'command=true',
      '--automation-profile',
      'nope',
    ]);
    expectCode(unknown, 3, 'an unknown profile');
    assert.match(unknown.stderr, /No automation-profile named local\/nope/);
  });
});
