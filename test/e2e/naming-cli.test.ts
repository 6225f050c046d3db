/**
 * End to end: things can be named. Short id prefixes and `last` for sessions (both modes) and
 * plans (local mode: a plan needs a git checkout on the agent's host), lists that fit 80 columns,
 * and `plan rollback <plan> --steps N` with the message for a plan id where a checkpoint goes.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { initRepo } from '../support/git.ts';
import { e2eRoot, inBothModes, localMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-naming-e2e');

/** Every line of a table printed in table mode (rich) when stdout is not a terminal: none past 80. */
function assertFits(stdout: string, what: string): void {
  const long = stdout.split('\n').filter((l) => l.length > 80);
  assert.deepEqual(long, [], `${what}: lines longer than 80 columns:\n${stdout}`);
}

inBothModes('sessions by prefix and last', { root: ROOT }, ({ cli }) => {
  const ids: string[] = [];

  before(async () => {
    for (const text of ['fix the parser please', `write the tests ${'and then some more of them '.repeat(6)}`]) {
      const sent = await cli.ok(['send', '--actor', 'builtin/echo', text]);
      ids.push(sent.task.contextId as string);
    }
  });

  it('shows the newest session as `last`, and one by the short id the list shows', async () => {
    assert.equal((await cli.ok(['session', 'show', 'last'])).session.id, ids[1]);
    const first = ids[0] ?? '';
    // Two sessions made within the same quarter second share 8 characters: the list shows more then.
    const table = await cli.run(['--format', 'rich', 'session', 'list'], { code: 0 });
    const shown =
      table.stdout
        .split('\n')
        .find((l) => l.includes('fix the parser'))
        ?.split(' ')[0] ?? '';
    assert.ok(shown.length >= 8 && shown.length < first.length && first.startsWith(shown), table.stdout);
    assert.equal((await cli.ok(['session', 'show', shown])).session.id, first);
    assert.equal((await cli.ok(['session', 'show', shown.toLowerCase()])).session.id, first);
  });

  it('gets the newest task as `last`, and a task by a prefix of its id', async () => {
    const { task: last } = await cli.ok(['task', 'get', 'last']);
    assert.equal(last.contextId, ids[1]);
    assert.equal((await cli.ok(['task', 'get', (last.id as string).slice(0, 20)])).task.id, last.id);
  });

  it('refuses a prefix both sessions share, listing them, and one too short', async () => {
    const shared = await cli.run(['session', 'show', (ids[0] ?? '').slice(0, 4)]);
    assert.equal(shared.code, 7, shared.stderr);
    assert.match(shared.stderr, /matches more than one session/);
    for (const id of ids) assert.ok(shared.stderr.includes(id), shared.stderr);
    assert.match(shared.stderr, /type more characters/);
    const short = await cli.run(['session', 'show', 'abc']);
    assert.equal(short.code, 7, short.stderr);
    assert.match(short.stderr, /at least 4 characters/);
  });

  it('lists sessions with their first message within 80 columns; plain keeps full ids', async () => {
    const table = await cli.run(['--format', 'rich', 'session', 'list'], { code: 0 });
    assertFits(table.stdout, 'session list');
    assert.match(table.stdout, /FIRST MESSAGE/);
    assert.match(table.stdout, /fix the parser please/);
    assert.match(table.stdout, /write the tests and then .*…/);
    const plain = await cli.run(['--format', 'plain', 'session', 'list'], { code: 0 });
    for (const id of ids) assert.ok(plain.stdout.includes(id), plain.stdout);
  });
});

describe('plans by prefix, plan list and plan rollback (local mode)', () => {
  const { cli } = localMode({ root: join(ROOT, 'plans'), cli: { timeoutMs: 60_000 } });
  let id = '';

  before(async () => {
    const repo = join(ROOT, 'plans', 'repo');
    initRepo(repo, { 'src/a.ts': 'const colour = 1;\nexport { colour };\n' });
    await cli.run(['resource', 'add', 'git-checkout', 'web', '--path', repo, '--branch', 'main'], { code: 0 });
    await cli.run(['project', 'create', 'web', '--resource', 'web'], { code: 0 });
    const args = ['--arg', 'pattern=colour', '--arg', 'replacement=color', '--arg', 'glob=src/**/*.ts'];
    const used = await cli.ok(['plan', 'use', 'builtin/replace', 'web', ...args]);
    id = used.plan.planId as string;
    await cli.run(['plan', 'execute', id], { code: 0 });
  });

  it('shows a plan by its first 8 characters and as `last`', async () => {
    assert.equal((await cli.ok(['plan', 'show', id.slice(0, 8)])).planId, id);
    assert.equal((await cli.ok(['plan', 'status', 'last'])).planId, id);
  });

  it('lists plans with what they do within 80 columns', async () => {
    const table = await cli.run(['--format', 'rich', 'plan', 'list'], { code: 0 });
    assertFits(table.stdout, 'plan list');
    assert.match(table.stdout, new RegExp(`^${id.slice(0, 8)}\\S* +execute/complete .*Replace /colour/`, 'm'));
  });

  it('names a plan id given where a checkpoint goes, with the plan’s checkpoints', async () => {
    const wrong = await cli.run(['plan', 'rollback', id]);
    assert.equal(wrong.code, 7, wrong.stderr);
    assert.match(wrong.stderr, new RegExp(`${id} is a plan, not a checkpoint`));
    assert.match(wrong.stderr, /^ {2}[0-9A-Z]{26} {2}step 0 {2}before-execute$/m);
    assert.match(wrong.stderr, new RegExp(`agents plan rollback ${id} --steps 1`));
  });

  it('names a decision id given for --to, with the checkpoint taken after it', async () => {
    const tree = await cli.ok(['plan', 'tree', id]);
    const decision = (tree.decisions as { id: string }[])[0]?.id ?? '';
    const wrong = await cli.run(['plan', 'rollback', id, '--to', decision]);
    assert.equal(wrong.code, 7, wrong.stderr);
    assert.match(wrong.stderr, new RegExp(`${decision} is a decision, not a checkpoint`));
    assert.match(wrong.stderr, new RegExp(`The checkpoints of plan ${id}:\n {2}[0-9A-Z]{26} {2}step 0`));
  });

  it('rolls a plan back one step with --steps 1, by a prefix of its id', async () => {
    const before = await cli.ok(['plan', 'status', id]);
    assert.ok(before.progress.stepsDone >= 1, JSON.stringify(before.progress));
    const rolled = await cli.ok(['plan', 'rollback', id.slice(0, 10), '--steps', '1']);
    assert.equal(rolled.planId, id);
    assert.equal(rolled.progress.stepsDone, before.progress.stepsDone - 1);
    assert.equal(`${rolled.phase}/${rolled.state}`, 'execute/queued');
  });
});
