/**
 * Long sessions through the real agent and the fake OpenAI-compatible server: a session whose
 * earlier turns pass the actor's threshold is compacted at the start of the next turn (the request
 * then carries the summary, not the old turns), `_cleveragents/session/compact` does it on demand,
 * a later compaction folds the earlier one in, and the original turns stay readable. Run on the
 * embedded SQLite store (in memory) and, when CA_TEST_PG_URL is set, over HTTP on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  actorRegistry,
  getTask,
  sessionCompact,
  sessionCreate,
  sessionShow,
  type A2AClient,
  type Task,
} from '../../src/protocol/client/index.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';
import { rpcError } from './a2a.suite.ts';
import { addActor, LLM_TEST_KEY, statusText, streamTurn } from './llm.suite.ts';

process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;
process.env['CLEVERAGENTS_LLM_RETRY_BASE_MS'] = '20';

type Body = { model: string; messages: Array<{ role: string; content?: unknown }> };
const bodyOf = (f: FakeLlm, i: number): Body => f.generations[i]?.body as Body;
const systemOf = (b: Body): string => {
  const c = b.messages.find((m) => m.role === 'system')?.content ?? '';
  return typeof c === 'string' ? c : JSON.stringify(c);
};
const textOf = (b: Body): string => JSON.stringify(b.messages.filter((m) => m.role !== 'system'));
/** About 200 tokens of words no other turn uses. */
const long = (tag: string): string[] => Array.from({ length: 10 }, () => `${tag} apple banana cherry `.repeat(5));
const meta = (t: Task): Record<string, unknown> => t.metadata?.['cleveragents'] as Record<string, unknown>;
const summaryOf = (t: Task): string =>
  (t.artifacts ?? [])
    .filter((a) => a.artifactId === 'summary')
    .flatMap((a) => a.parts.map((p) => p.text ?? ''))
    .join('');

const ENGINES = [
  { name: 'SQLite', transport: 'memory' as const, postgres: false, skip: false as string | false },
  { name: 'PostgreSQL', transport: 'http' as const, postgres: true, skip: pgSkip() },
];

for (const engine of ENGINES) {
  describe(`compaction of long sessions (${engine.name})`, { skip: engine.skip }, () => {
    let h: Harness;
    let db: PgTestDatabase | undefined;
    let client: A2AClient;
    let fake: FakeLlm;
    let n = 0;

    async function actor(extra: Record<string, unknown> = {}): Promise<string> {
      const name = `local/c${++n}`;
      await addActor(client, {
        name,
        provider: 'openai-compatible',
        model: 'fake-model',
        baseUrl: fake.url,
        apiKeyEnv: 'LLM_TEST_KEY',
        maxRetries: 0,
        contextWindow: 1000,
        maxTokens: 200,
        ...extra,
      });
      return name;
    }

    /** One turn answered with `reply`; returns the task (asserting it completed). */
    async function say(sessionId: string, text: string, ...reply: string[]): Promise<Task> {
      fake.push({ text: reply, usage: { input: 10, output: 5 } });
      const turn = await streamTurn(client, text, { contextId: sessionId });
      assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED', statusText(turn.task));
      return turn.task;
    }

    const tasksOf = async (sessionId: string): Promise<Task[]> => (await client.call(sessionShow, { sessionId })).tasks;
    const compactions = async (sessionId: string): Promise<Task[]> =>
      (await tasksOf(sessionId)).filter((t) => meta(t)?.['kind'] === 'compaction');

    before(async () => {
      db = engine.postgres ? await createPgDatabase('ca_compact') : undefined;
      h = await startHarness(engine.transport, db ? { env: { CLEVERAGENTS_DATABASE_URL: db.url } } : {});
      client = h.client;
      fake = await startFakeOpenAI({ expectKey: LLM_TEST_KEY });
    });

    after(async () => {
      await h?.close();
      await fake?.close();
      await db?.drop();
    });

    it('compacts at the threshold: the next request carries the summary, not the old turns', async () => {
      const a = await actor({ compaction: { threshold: 0.35, keepTurns: 1 } });
      const s = await client.call(sessionCreate, { actor: a });
      const t1 = await say(s.id, 'first question', ...long('oldfact'));
      const beforeSecond = fake.generations.length;
      const t2 = await say(s.id, 'second question', ...long('middle'));
      // Below the threshold (one turn of ~260 tokens of 350): the second turn sent the first as it is.
      assert.equal(fake.generations.length, beforeSecond + 1);
      assert.match(textOf(bodyOf(fake, beforeSecond)), /oldfact/);
      assert.deepEqual(await compactions(s.id), []);

      // Two earlier turns pass 350 tokens: the first is summarised (keepTurns 1 keeps the second).
      fake.push({
        text: ['SUMMARY-ONE: the user asked a first question about oldfact.'],
        usage: { input: 50, output: 9 },
      });
      const at = fake.generations.length;
      const t3 = await say(s.id, 'third question', 'short answer');
      assert.equal(fake.generations.length, at + 2, 'a summary request, then the turn');
      const summarising = bodyOf(fake, at);
      assert.match(systemOf(summarising), /You write the summary of a conversation/);
      assert.match(textOf(summarising), /first question/);
      assert.match(textOf(summarising), /oldfact/);
      assert.doesNotMatch(textOf(summarising), /second question/, 'the kept turn is not summarised');

      const sent = bodyOf(fake, at + 1);
      assert.match(systemOf(sent), /1 turn was compacted into a summary/);
      assert.match(systemOf(sent), new RegExp(`summarised turns: ${t1.id}`));
      assert.match(systemOf(sent), /SUMMARY-ONE/);
      assert.doesNotMatch(textOf(sent), /oldfact|first question/, 'the old turn is not sent');
      assert.match(textOf(sent), /second question/);
      assert.match(textOf(sent), /third question/);

      const [c1] = await compactions(s.id);
      assert.ok(c1);
      assert.equal(c1.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(statusText(c1), 'compaction: 1 turn summarised (1 new)');
      assert.deepEqual(meta(c1), {
        kind: 'compaction',
        covers: [t1.id],
        turns: 1,
        actor: a,
        model: 'fake-model',
        inputTokens: 50,
        outputTokens: 9,
        trigger: 'automatic',
      });
      assert.equal(summaryOf(c1), 'SUMMARY-ONE: the user asked a first question about oldfact.');
      assert.deepEqual(t3.metadata?.['context'], { compaction: { taskId: c1.id, covers: [t1.id] } });
      assert.equal(t2.metadata?.['context'], undefined);

      // The original turn is untouched: tasks/get and session show still have it all.
      const original = await client.call(getTask, { id: t1.id });
      assert.equal(original.history?.[0]?.parts[0]?.text, 'first question');
      assert.match(JSON.stringify(original.artifacts), /oldfact/);
      const shown = await tasksOf(s.id);
      assert.deepEqual(
        shown.map((t) => t.id),
        [t1.id, t2.id, t3.id, c1.id],
      );
      // The session counts the compaction as one of its tasks.
      assert.equal((await client.call(sessionShow, { sessionId: s.id, turns: 1 })).session.taskCount, 4);
    });

    it('compacts on demand, and a second compaction covers the first one’s turns plus the new ones', async () => {
      const a = await actor({ compaction: { enabled: false } });
      const s = await client.call(sessionCreate, { actor: a });
      const t1 = await say(s.id, 'alpha question', ...long('alpha'));
      const t2 = await say(s.id, 'beta question', ...long('beta'));
      const t3 = await say(s.id, 'gamma question', 'gamma answer');
      // enabled: false — no automatic compaction, however full.
      assert.deepEqual(await compactions(s.id), []);

      fake.push({ text: ['SUMMARY-A'], usage: { input: 40, output: 2 } });
      const first = await client.call(sessionCompact, { sessionId: s.id, keepTurns: 1 });
      assert.equal(first.compacted, 2);
      assert.deepEqual(meta(first.task)['covers'], [t1.id, t2.id]);
      assert.equal(meta(first.task)['trigger'], 'on-demand');
      assert.equal(summaryOf(first.task), 'SUMMARY-A');
      assert.equal(statusText(first.task), 'compaction: 2 turns summarised (2 new, on demand)');

      const t4 = await say(s.id, 'delta question', 'delta answer');
      const sent = bodyOf(fake, fake.generations.length - 1);
      assert.match(systemOf(sent), /2 turns were compacted into a summary/);
      assert.match(systemOf(sent), /SUMMARY-A/);
      assert.doesNotMatch(textOf(sent), /alpha|beta/);
      assert.match(textOf(sent), /gamma question/);

      // keepTurns 0: the previous summary, t3 and t4 are summarised together.
      fake.push({ text: ['SUMMARY-B'] });
      const at = fake.generations.length;
      const second = await client.call(sessionCompact, { sessionId: s.id, keepTurns: 0 });
      assert.equal(second.compacted, 2);
      assert.deepEqual(meta(second.task)['covers'], [t1.id, t2.id, t3.id, t4.id]);
      assert.equal(meta(second.task)['turns'], 4);
      const summarising = textOf(bodyOf(fake, at));
      assert.match(summarising, /The summary so far \(of 2 earlier turns\)/);
      assert.match(summarising, /SUMMARY-A/);
      assert.match(summarising, /gamma question/);
      assert.match(summarising, /delta question/);
      assert.doesNotMatch(summarising, /alpha question/, 'the first summary stands in for the oldest turns');

      await say(s.id, 'epsilon question', 'epsilon answer');
      const next = bodyOf(fake, fake.generations.length - 1);
      assert.match(systemOf(next), /4 turns were compacted/);
      assert.match(systemOf(next), /SUMMARY-B/);
      assert.doesNotMatch(systemOf(next), /SUMMARY-A/);
      assert.deepEqual(
        next.messages.filter((m) => m.role !== 'system').map((m) => m.content),
        ['epsilon question'],
      );

      // Nothing left: the one turn since is kept (keepTurns 1).
      const err = await rpcError(
        client.call(sessionCompact, { sessionId: s.id, keepTurns: 1 }),
        -32004,
        'BusinessRuleViolation',
      );
      assert.match(
        err.message,
        /Nothing to compact in session .*: 1 turn since the last compaction, and the newest 1 are kept/,
      );
    });

    it('a configured summariser writes the summary with its own model', async () => {
      await addActor(client, {
        name: 'local/summ',
        provider: 'openai-compatible',
        model: 'summary-model',
        baseUrl: fake.url,
        apiKeyEnv: 'LLM_TEST_KEY',
        maxRetries: 0,
      });
      const a = await actor({ compaction: { summarizer: 'local/summ', enabled: false } });
      const s = await client.call(sessionCreate, { actor: a });
      await say(s.id, 'one', 'answer one');
      await say(s.id, 'two', 'answer two');
      fake.push({ text: ['by the summariser'] });
      const at = fake.generations.length;
      const res = await client.call(sessionCompact, { sessionId: s.id, keepTurns: 0 });
      assert.equal(bodyOf(fake, at).model, 'summary-model');
      assert.equal(meta(res.task)['actor'], 'local/summ');
      assert.equal(meta(res.task)['model'], 'summary-model');
      // The actor refers to its summariser: removing it is refused while in use.
      await rpcError(client.call(actorRegistry.remove, { name: 'local/summ' }), -32004, 'EntityInUseError');
    });

    it('refuses a session of a built-in actor, and a session with nothing to compact', async () => {
      const echo = await client.call(sessionCreate, { actor: 'builtin/echo' });
      const err = await rpcError(client.call(sessionCompact, { sessionId: echo.id }), -32004, 'BusinessRuleViolation');
      assert.match(err.message, /talks to builtin\/echo, which is not an LLM actor/);

      const a = await actor();
      const s = await client.call(sessionCreate, { actor: a });
      await say(s.id, 'only', 'one turn');
      const none = await rpcError(client.call(sessionCompact, { sessionId: s.id }), -32004, 'BusinessRuleViolation');
      assert.match(none.message, /Nothing to compact/);
      await rpcError(client.call(sessionCompact, { sessionId: 'no-such-session' }), -32001, 'ResourceNotFoundError');
      assert.deepEqual(await compactions(s.id), []);
    });

    it('a summariser that fails leaves the turn to go on without a compaction; on demand it is the answer', async () => {
      const a = await actor({ compaction: { threshold: 0.1, keepTurns: 0 } });
      const s = await client.call(sessionCreate, { actor: a });
      await say(s.id, 'first', ...long('kept'));
      fake.push({ error: { status: 400, message: 'summaries are off today' } });
      const task = await say(s.id, 'second', 'still answered');
      assert.equal(task.metadata?.['context'], undefined);
      assert.match(textOf(bodyOf(fake, fake.generations.length - 1)), /kept/, 'the turn sent the history as it is');
      assert.deepEqual(await compactions(s.id), []);
      // On demand the failure is the answer, saying which summariser failed and why.
      fake.push({ error: { status: 400, message: 'still off' } });
      const err = await rpcError(
        client.call(sessionCompact, { sessionId: s.id, keepTurns: 0 }),
        -32603,
        'ServiceUnavailableError',
      );
      assert.match(err.message, new RegExp(`The summariser ${a} failed: .*still off`));
      assert.deepEqual(await compactions(s.id), []);
    });
  });
}
