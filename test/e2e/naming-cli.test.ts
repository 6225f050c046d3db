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

  // From here on the first session becomes the most recently active one.
  it('session update, diff, context, undo and compact take a prefix and name the session in full', async () => {
    const first = ids[0] ?? '';
    const short = uniquePrefix(first, ids[1] ?? '');
    assert.equal((await cli.ok(['session', 'update', short, '--actor', 'builtin/echo'])).session.id, first);
    assert.equal((await cli.ok(['session', 'diff', short])).sessionId, first);
    assert.equal((await cli.ok(['session', 'context', short])).sessionId, first);
    const undo = await cli.run(['session', 'undo', short]);
    assert.match(undo.stderr, new RegExp(`Session ${first} has no turn left to undo`));
    const compact = await cli.run(['session', 'compact', short]);
    assert.match(compact.stderr, new RegExp(`Session ${first} talks to builtin/echo, which is not an LLM actor`));
  });

  it('send --session with a short id continues that session, not a new one', async () => {
    const first = ids[0] ?? '';
    const before = (await cli.ok(['session', 'list'])).totalSize as number;
    const sent = await cli.ok(['send', '--session', uniquePrefix(first, ids[1] ?? ''), 'and once more']);
    assert.equal(sent.task.contextId, first);
    assert.equal((await cli.ok(['session', 'show', first])).session.taskCount, 2);
    assert.equal((await cli.ok(['session', 'list'])).totalSize, before);
  });

  it('chat --session last continues the most recently active session (no current project here)', async () => {
    const first = ids[0] ?? '';
    const chat = await cli.run(['--format', 'plain', 'chat', '--session', 'last'], { input: 'hello again\n', code: 0 });
    assert.match(chat.stdout, new RegExp(`^session: ${first}$`, 'm'));
    assert.equal((await cli.ok(['session', 'show', first])).session.taskCount, 3);
  });

  it('send --task takes a prefix of the task id', async () => {
    const { task } = await cli.ok(['task', 'get', 'last']);
    const sent = await cli.run(['send', '--task', (task.id as string).slice(0, 20), 'more']);
    // The echo's turn is over: the message reaches that very task, which refuses a finished turn.
    assert.match(sent.stderr, new RegExp(`Task ${task.id as string} is completed and accepts no further messages`));
  });
});

/** The shortest prefix of `id` (8 characters at least) that `other` does not share. */
function uniquePrefix(id: string, other: string): string {
  let n = 8;
  while (other.startsWith(id.slice(0, n))) n++;
  return id.slice(0, n);
}

describe('`last` of the current directory’s project (local mode)', () => {
  const root = join(ROOT, 'projects');
  const { cli } = localMode({ root });
  const repo = (name: string): string => join(root, name);
  const sessions: Record<string, string> = {};

  before(async () => {
    for (const name of ['alpha', 'beta']) {
      initRepo(repo(name), { 'README.md': `${name}\n` });
      await cli.run(['resource', 'add', 'git-checkout', name, '--path', repo(name), '--branch', 'main'], { code: 0 });
      await cli.run(['project', 'create', name, '--resource', name], { code: 0 });
    }
    // alpha's session first: beta's is the newest of all.
    for (const name of ['alpha', 'beta'])
      sessions[name] = (await cli.ok(['send', '--actor', 'builtin/echo', '--project', name, `work on ${name}`])).task
        .contextId as string;
  });

  it('session show last picks the current directory’s project, else the newest of all', async () => {
    assert.equal((await cli.ok(['session', 'show', 'last'], { cwd: repo('alpha') })).session.id, sessions['alpha']);
    assert.equal((await cli.ok(['session', 'show', 'last'], { cwd: root })).session.id, sessions['beta']);
  });

  it('chat --session last and chat --resume continue the current directory’s project’s session', async () => {
    const chat = await cli.run(['--format', 'plain', 'chat', '--session', 'last'], {
      cwd: repo('alpha'),
      input: 'hello alpha\n',
      code: 0,
    });
    assert.match(chat.stdout, new RegExp(`^session: ${sessions['alpha']}$`, 'm'));
    // --resume is the same as --session last: the directory's project's session, not the newest overall.
    await cli.ok(['send', '--session', sessions['beta'] ?? '', 'beta again'], { cwd: root });
    const resumed = await cli.run(['--format', 'plain', 'chat', '--resume'], {
      cwd: repo('alpha'),
      input: 'and again\n',
      code: 0,
    });
    assert.match(resumed.stdout, new RegExp(`^session: ${sessions['alpha']}$`, 'm'));
  });

  it('send --session last --project names the project whose newest session is meant', async () => {
    const sent = await cli.ok(['send', '--session', 'last', '--project', 'beta', 'more'], { cwd: repo('alpha') });
    assert.equal(sent.task.contextId, sessions['beta']);
  });

  it('plan status last picks the current directory’s project’s newest plan, else the newest of all', async () => {
    const plans: Record<string, string> = {};
    for (const name of ['alpha', 'beta']) {
      const args = ['--arg', 'pattern=x', '--arg', 'replacement=y', '--arg', 'glob=*.md'];
      plans[name] = (await cli.ok(['plan', 'use', 'builtin/replace', name, ...args])).plan.planId as string;
    }
    assert.equal((await cli.ok(['plan', 'status', 'last'], { cwd: repo('alpha') })).planId, plans['alpha']);
    assert.equal((await cli.ok(['plan', 'status', 'last'], { cwd: root })).planId, plans['beta']);
  });

  it('says so when the current project has no session or plan yet', async () => {
    const gamma = repo('gamma');
    initRepo(gamma, { 'README.md': 'gamma\n' });
    await cli.run(['resource', 'add', 'git-checkout', 'gamma', '--path', gamma, '--branch', 'main'], { code: 0 });
    await cli.run(['project', 'create', 'gamma', '--resource', 'gamma'], { code: 0 });
    const none = await cli.run(['session', 'undo', 'last'], { cwd: gamma });
    assert.equal(none.code, 3, none.stderr);
    assert.match(none.stderr, /no session in project local\/gamma \(this directory\) yet/);
    const noPlan = await cli.run(['plan', 'cancel', 'last'], { cwd: gamma });
    assert.equal(noPlan.code, 3, noPlan.stderr);
    assert.match(noPlan.stderr, /no plan in project local\/gamma \(this directory\) yet/);
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
