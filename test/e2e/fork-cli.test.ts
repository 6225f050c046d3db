/**
 * End to end: resuming and forking sessions and headless events through the built `agents` CLI,
 * as a user or a script runs it — in local mode (each call spawns its agent over stdio) and in
 * server mode (HTTP to `agents serve`). The model is the fake OpenAI-compatible server, whose
 * recorded requests show what history each turn carried.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot, inBothModes, type Mode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-fork-e2e');
const KEY = 'sk-fork-e2e-0123456789abcdef';

let fake: FakeLlm;

type Body = { messages: Array<{ role: string; content?: unknown }> };
/** What the model was last sent, the system prompt left out: `role: text` per message. */
const lastConversation = (): string[] =>
  (fake.generations.at(-1)?.body as Body).messages
    .filter((m) => m.role !== 'system')
    .map((m) => `${m.role}: ${String(m.content)}`);

/** Every line of stdout as JSON (each must parse). */
function jsonLines(stdout: string): any[] {
  const lines = stdout.split('\n');
  assert.equal(lines.pop(), '', 'the output ends with a newline');
  return lines.map((l, i) => {
    try {
      return JSON.parse(l) as unknown;
    } catch {
      throw new Error(`line ${i + 1} is not JSON: ${l}`);
    }
  });
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
});

after(async () => {
  await fake?.close();
});

/** The same user journeys in either mode. */
function journeys({ name: mode, cli: c }: Mode): void {
  let repo: string;

  before(async () => {
    const f = join(ROOT, `${mode}-actor.yaml`);
    writeFileSync(
      f,
      `name: local/talker\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: FORK_E2E_KEY\n`,
    );
    assert.equal((await c.run(['actor', 'add', '--config', f])).code, 0);
    repo = join(ROOT, `${mode}-repo`);
    initRepo(repo, { 'src/a.ts': 'const colour = 1;\n' });
    for (const args of [
      ['resource', 'add', 'git-checkout', 'local/events', '--path', repo, '--branch', 'main'],
      ['project', 'create', 'local/events', '--resource', 'local/events'],
    ]) {
      const res = await c.run(args);
      assert.equal(res.code, 0, res.stderr);
    }
  });

  it('chat --resume continues the last session with a recap; --session ID that one', async () => {
    fake.push({ text: ['Hi, Ada.'] });
    const first = await c.ok(['send', '--actor', 'local/talker', 'my name is Ada']);
    const sessionId = first.task.contextId as string;
    fake.push({ text: ['You are Ada.'] });
    const res = await c.run(['chat', '--resume'], { input: 'who am I?\n/exit\n' });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`^session: ${sessionId}$`, 'm'));
    assert.match(
      res.stdout,
      new RegExp(`^recap\\t${first.task.id as string}\\tcompleted\\tmy name is Ada\\tHi, Ada\\.$`, 'm'),
    );
    assert.match(res.stdout, /You are Ada\./);
    assert.deepEqual(lastConversation(), ['user: my name is Ada', 'assistant: Hi, Ada.', 'user: who am I?']);

    // Another session is now the latest; --session picks the first one again, recap first.
    fake.push({ text: ['Other.'] });
    await c.ok(['send', '--actor', 'local/talker', 'unrelated']);
    fake.push({ text: ['Still Ada.'] });
    const again = await c.run(['chat', '--session', sessionId], { input: 'and now?\n/exit\n' });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^recap\t.*\twho am I\?\tYou are Ada\.$/m);
    assert.equal(lastConversation().length, 5, 'the two earlier turns and the new question');
    const none = await c.run(['chat', '--resume', '--actor', 'local/talker'], { input: '/exit\n' });
    assert.equal(none.code, 2, 'a resumed session keeps its actor');
  });

  it('session fork --at starts a new session from that turn; the original is untouched', async () => {
    fake.push({ text: ['one'] }, { text: ['two'] });
    const a = await c.ok(['send', '--actor', 'local/talker', 'first']);
    const sessionId = a.task.contextId as string;
    const b = await c.ok(['send', '--session', sessionId, 'second']);
    const original = await c.ok(['session', 'show', sessionId]);

    const forked = (await c.ok(['session', 'fork', sessionId, '--at', a.task.id, '--title', 'Branch'])).session;
    assert.notEqual(forked.id, sessionId);
    assert.deepEqual(forked.forkedFrom, { sessionId, taskId: a.task.id });
    assert.equal(forked.title, 'Branch');
    assert.equal(forked.taskCount, 1);
    const shown = await c.run(['session', 'show', forked.id]);
    assert.match(shown.stdout, new RegExp(`^forked from: ${sessionId} at ${a.task.id as string}$`, 'm'));
    assert.match(shown.stdout, /^turn\t\S+\tcompleted\tfirst\tone(\t|$)/m);

    fake.push({ text: ['diverged'] });
    const next = await c.ok(['send', '--session', forked.id, 'something else']);
    assert.equal(next.task.contextId, forked.id);
    assert.deepEqual(lastConversation(), ['user: first', 'assistant: one', 'user: something else']);
    assert.deepEqual(await c.ok(['session', 'show', sessionId]), original);
    assert.ok(!original.tasks.some((t: { id: string }) => t.id === next.task.id));
    assert.equal(b.task.status.state, 'TASK_STATE_COMPLETED');

    const unknown = await c.run(['session', 'fork', sessionId, '--at', 'no-such-task']);
    assert.equal(unknown.code, 7, unknown.stderr);
    assert.match(unknown.stderr, /is not a turn of session/);
  });

  it('send --format json --events: one JSON line per event as it happens, the result last', async () => {
    fake.push({ text: ['Hel', 'lo'] });
    const res = await c.run(['--format', 'json', 'send', '--actor', 'local/talker', '--events', 'hi']);
    assert.equal(res.code, 0, res.stderr);
    const lines = jsonLines(res.stdout);
    const result = lines.pop();
    assert.equal(result.command, 'send');
    assert.equal(result.exitCode, 0);
    assert.equal(result.data.task.status.state, 'TASK_STATE_COMPLETED');
    assert.ok(lines.length >= 3, res.stdout);
    assert.ok(lines.every((l) => l.type === 'event'));
    const seqs = lines.map((l) => l.seq as number);
    assert.deepEqual(
      seqs,
      [...seqs].sort((x, y) => x - y),
      'in order',
    );
    assert.equal(new Set(seqs).size, seqs.length);
    const text = lines.flatMap(
      (l) => l.artifactUpdate?.artifact.parts.map((p: { text?: string }) => p.text ?? '') ?? [],
    );
    assert.equal(text.join(''), 'Hello');
    assert.equal(lines.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');

    // The exit codes are those without --events, and the lines still parse when the command fails.
    fake.push({ error: { status: 400, message: 'bad request' } });
    const failed = await c.run(['--format', 'json', 'send', '--actor', 'local/talker', '--events', 'fail']);
    assert.equal(failed.code, 9, failed.stdout);
    const failedLines = jsonLines(failed.stdout);
    assert.equal(failedLines.at(-1).exitCode, 9);
    assert.equal(failedLines.at(-2).statusUpdate.status.state, 'TASK_STATE_FAILED');
    const missing = await c.run(['--format', 'json', 'send', '--session', 'no-such-session', '--events', 'hi']);
    assert.equal(missing.code, 3);
    assert.deepEqual(
      jsonLines(missing.stdout).map((l) => l.exitCode),
      [3],
    );

    // Without --format json there is nothing to print them in.
    const plain = await c.run(['send', '--actor', 'local/talker', '--events', 'hi']);
    assert.equal(plain.code, 2);
    assert.match(plain.stderr, /--events needs --format json/);
  });

  it('plan execute --format json --events: the task events and the phase changes, then the result', async () => {
    const used = await c.ok([
      'plan',
      'use',
      'builtin/replace',
      'local/events',
      '--arg',
      'pattern=colour',
      '--arg',
      'replacement=color',
      '--arg',
      'glob=src/**/*.ts',
    ]);
    const planId = used.plan.planId as string;
    const res = await c.run(['--format', 'json', 'plan', 'execute', planId, '--events']);
    assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
    const lines = jsonLines(res.stdout);
    const result = lines.pop();
    assert.equal(result.command, 'plan execute');
    assert.equal(result.exitCode, 0);
    assert.equal(`${result.data.plan.phase}/${result.data.plan.state}`, 'execute/complete');
    const phases = lines.filter((l) => l.type === 'phase').map((l) => `${l.phase}/${l.state}`);
    // Where the run started (the plan as execute found it), each change, and where it ended.
    assert.equal(phases[0], 'execute/processing', phases.join(' '));
    assert.equal(phases.at(-1), 'execute/complete');
    phases.slice(1).forEach((p, i) => assert.notEqual(p, phases[i], 'a line per change only'));
    assert.ok(lines.every((l) => l.type === 'phase' || l.type === 'event'));
    const seqs = lines.filter((l) => l.type === 'event').map((l) => l.seq as number);
    assert.ok(seqs.length > 0);
    assert.deepEqual(
      seqs,
      [...seqs].sort((x, y) => x - y),
      'in order',
    );
    // A line is written as it happens: the last event is the task's end, before the result.
    const lastEvent = lines.filter((l) => l.type === 'event').at(-1);
    assert.equal(lastEvent.statusUpdate?.status.state ?? lastEvent.task?.status.state, 'TASK_STATE_COMPLETED');
  });
}

inBothModes(
  'resume, fork and events',
  { root: ROOT, env: { FORK_E2E_KEY: KEY }, cli: { timeoutMs: 60_000 } },
  journeys,
);
