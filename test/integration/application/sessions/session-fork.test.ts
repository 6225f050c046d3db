/**
 * Forking and resuming sessions through the real agent (in-memory transport, SQLite storage), with
 * an LLM actor on the fake OpenAI-compatible server: what is copied, what is refused, that the
 * original stays as it was, and that the fork's next turn sends the model the copied history only.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, makePrincipal, type Principal } from '../../../../src/application/index.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import {
  A2AClient,
  getTask,
  sessionCreate,
  sessionFork,
  sessionResume,
  sessionShow,
  type Session,
  type Task,
} from '../../../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../../../src/protocol/server/in-memory.transport.ts';
import { createGate, startFakeOpenAI, type FakeLlm } from '../../../support/fake-llm.ts';
import { eventually, tempDir } from '../../../support/harness.ts';
import { addActor, LLM_TEST_KEY, streamTurn } from '../../../contract/llm.suite.ts';

process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;

type Body = { messages: Array<{ role: string; content?: unknown }> };
const lastBody = (f: FakeLlm): Body => f.generations.at(-1)?.body as Body;
/** The user and assistant texts the model was sent, in order (the system prompt left out). */
const conversation = (b: Body): string[] =>
  b.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${String(m.content)}`);

/** Another user, owner of their own namespace only. */
const BOB: Principal = makePrincipal({ id: 'bob', roles: { bob: 'owner' } });

const reasonOf = (err: unknown): string | undefined => (err as { reason?: string }).reason;

describe('session fork and resume', () => {
  let app: App;
  let client: A2AClient;
  let fake: FakeLlm;
  let dir: string;
  let source: Session;
  let turns: Task[];

  /** One turn of `session` answered `answer` by the fake. */
  async function say(session: string, text: string, answer: string): Promise<Task> {
    fake.push({ text: [answer], usage: { input: 5, output: 2 } });
    const t = await streamTurn(client, text, { contextId: session });
    assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(t.task.status));
    return t.task;
  }

  const show = (id: string) => client.call(sessionShow, { sessionId: id });

  before(async () => {
    dir = tempDir('ca-fork-');
    app = await buildApp({
      dataDir: dir,
      inMemory: true,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
    client = new A2AClient(
      new InMemoryClientTransport(app.dispatcher, () => app.card.publicCard('1.0').card, LOCAL_PRINCIPAL, '1.0'),
    );
    fake = await startFakeOpenAI({ expectKey: LLM_TEST_KEY });
    await addActor(client, {
      name: 'local/forky',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      maxRetries: 0,
    });
    source = await client.call(sessionCreate, { actor: 'local/forky', title: 'Origins' });
    turns = [
      await say(source.id, 'first question', 'first answer'),
      await say(source.id, 'second question', 'second answer'),
      await say(source.id, 'third question', 'third answer'),
    ];
  });

  after(async () => {
    await app?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies every turn by default, with new ids, and leaves the original untouched', async () => {
    const before = await show(source.id);
    const fork = await client.call(sessionFork, { sessionId: source.id });
    assert.notEqual(fork.id, source.id);
    assert.equal(fork.actor, 'local/forky');
    assert.equal(fork.title, 'Origins (fork)');
    assert.equal(fork.taskCount, 3);
    assert.deepEqual(fork.forkedFrom, { sessionId: source.id, taskId: turns[2]!.id });
    const copied = await show(fork.id);
    assert.deepEqual(copied.session, fork);
    assert.equal(copied.tasks.length, 3);
    copied.tasks.forEach((t, i) => {
      const original = before.tasks[i]!;
      assert.ok(!turns.some((o) => o.id === t.id), 'a copy has an id of its own');
      assert.equal(t.contextId, fork.id);
      // History and artifacts are the original's, with the ids they name moved to the copy.
      for (const m of t.history ?? []) {
        assert.equal(m.contextId, fork.id);
        assert.equal(m.taskId, t.id);
      }
      assert.deepEqual(
        t.history?.map((m) => m.parts),
        original.history?.map((m) => m.parts),
      );
      assert.deepEqual(t.artifacts, original.artifacts);
      assert.deepEqual(t.metadata?.['forkedFrom'], { sessionId: source.id, taskId: original.id });
      assert.deepEqual(t.metadata?.['usage'], original.metadata?.['usage']);
    });
    // The copies are tasks of their own (tasks/get), and the original did not change.
    assert.equal((await client.call(getTask, { id: copied.tasks[0]!.id })).contextId, fork.id);
    assert.deepEqual(await show(source.id), before);
  });

  it('copies up to and including --at, and the next turn sends the model only that history', async () => {
    const fork = await client.call(sessionFork, { sessionId: source.id, atTaskId: turns[0]!.id, title: 'Branch' });
    assert.equal(fork.title, 'Branch');
    assert.equal(fork.taskCount, 1);
    assert.deepEqual(fork.forkedFrom, { sessionId: source.id, taskId: turns[0]!.id });
    await say(fork.id, 'a different second question', 'a different answer');
    assert.deepEqual(conversation(lastBody(fake)), [
      'user: first question',
      'assistant: first answer',
      'user: a different second question',
    ]);
    // The fork diverged; the original's next turn still sees its own three turns.
    await say(source.id, 'fourth question', 'fourth answer');
    assert.deepEqual(conversation(lastBody(fake)), [
      'user: first question',
      'assistant: first answer',
      'user: second question',
      'assistant: second answer',
      'user: third question',
      'assistant: third answer',
      'user: fourth question',
    ]);
    assert.equal((await show(fork.id)).tasks.length, 2);
  });

  it('refuses a task that is not a turn of the session', async () => {
    const other = await client.call(sessionCreate, { actor: 'local/forky' });
    const elsewhere = await say(other.id, 'elsewhere', 'there');
    for (const atTaskId of ['no-such-task', elsewhere.id]) {
      await assert.rejects(client.call(sessionFork, { sessionId: source.id, atTaskId }), (err: unknown) => {
        assert.equal((err as { code?: number }).code, -32602, String(err));
        assert.match(String((err as Error).message), /is not a turn of session/);
        return true;
      });
    }
  });

  it('refuses to copy a running turn, but forks before it', async () => {
    const s = await client.call(sessionCreate, { actor: 'local/forky' });
    const done = await say(s.id, 'settled', 'yes');
    const gate = createGate();
    fake.push({ text: ['still ', 'going'], gate: gate.promise, holdAfter: 1 });
    const calls = fake.generations.length;
    const running = streamTurn(client, 'long one', { contextId: s.id });
    await eventually(
      async () => (fake.generations.length > calls ? true : undefined),
      5000,
      'the turn reached the model',
    );
    const sessions = app.facade.sessions;
    await assert.rejects(sessions.fork(s.id, {}, LOCAL_PRINCIPAL), (err: unknown) => {
      assert.equal(reasonOf(err), 'INVALID_STATE');
      assert.match(String((err as Error).message), /is working: only finished turns can be copied/);
      return true;
    });
    const early = await sessions.fork(s.id, { atTaskId: done.id }, LOCAL_PRINCIPAL);
    assert.equal(early.taskCount, 1);
    gate.release();
    assert.equal((await running).task.status.state, 'TASK_STATE_COMPLETED');
  });

  it("refuses another user's session as not found, and stores nothing", async () => {
    const sessions = app.facade.sessions;
    await assert.rejects(sessions.fork(source.id, {}, BOB), (err: unknown) => reasonOf(err) === 'NOT_FOUND');
    await assert.rejects(sessions.resume(source.id, BOB, 3), (err: unknown) => reasonOf(err) === 'NOT_FOUND');
    // Bob has no session at all: resume without an id says so.
    await assert.rejects(sessions.resume(undefined, BOB, 3), (err: unknown) => {
      assert.equal(reasonOf(err), 'NOT_FOUND');
      assert.match(String((err as Error).message), /no session to resume/);
      return true;
    });
    assert.equal((await sessions.list(BOB, 10)).totalSize, 0);
  });

  it('resume: the given session or the most recently active, with its last turns', async () => {
    const latest = await client.call(sessionCreate, { actor: 'local/forky' });
    const a = await say(latest.id, 'one', 'uno');
    const b = await say(latest.id, 'two', 'dos');
    const resumed = await client.call(sessionResume, { turns: 1 });
    assert.equal(resumed.session.id, latest.id);
    assert.deepEqual(
      resumed.tasks.map((t) => t.id),
      [b.id],
    );
    const named = await client.call(sessionResume, { sessionId: source.id });
    assert.equal(named.session.id, source.id);
    assert.equal(named.tasks.length, 3, 'three turns by default');
    assert.ok(!named.tasks.some((t) => t.id === a.id));
  });
});
