/** The chat's own commands: /cost sums the session's usage, /clear starts alike, /compact and /undo check their arguments. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AClientError, type Task } from '../../../../../src/protocol/client/index.ts';
import { CHAT_SLASH, costText, sessionCost } from '../../../../../src/presentation/cli/chat/chat-slash.ts';
import { fakeClient, fakeRun, SESSION } from './chat-fakes.ts';

const turn = (id: string, usage?: Record<string, unknown>): Task => ({
  id,
  contextId: SESSION.id,
  status: { state: 'TASK_STATE_COMPLETED' },
  ...(usage ? { metadata: { usage } } : {}),
});

const cmd = (name: string) => {
  const c = CHAT_SLASH[name];
  assert.ok(c, `no /${name}`);
  return c;
};

describe('/cost', () => {
  it("sums every turn's tokens and cost, and says which turns' models reported no cost", () => {
    const sum = sessionCost([
      turn('t1', { inputTokens: 100, outputTokens: 10, cost: { amount: 0.001, currency: 'USD' } }),
      turn('t2'),
      turn('t3', { inputTokens: 50, outputTokens: 5, cacheReadTokens: 20 }),
    ]);
    assert.deepEqual(sum, {
      turns: 3,
      measured: 2,
      inputTokens: 150,
      outputTokens: 15,
      cacheReadTokens: 20,
      cost: [{ amount: 0.001, currency: 'USD' }],
      unpriced: 1,
    });
    assert.equal(
      costText(sum),
      "3 turns · 150 in (20 cache read) / 15 out tokens · 0.0010 USD · 1 turn's model reported no cost",
    );
  });

  it('says when no model reported a cost, and when no turn reported usage', () => {
    assert.match(
      costText(sessionCost([turn('t1', { inputTokens: 1, outputTokens: 2 })])),
      /no cost \(the actor has no prices\)/,
    );
    assert.equal(
      costText(sessionCost([turn('t1')])),
      "1 turn · no token usage reported (the actor's model reports none)",
    );
  });

  it('reads the turns with sessionShow and records the sum', async () => {
    const { ctx, out } = fakeRun('plain');
    const { client, calls } = fakeClient({
      '_cleveragents/session/show': () => ({
        session: SESSION,
        tasks: [turn('t1', { inputTokens: 7, outputTokens: 3 })],
      }),
    });
    const res = await cmd('cost').run({ ctx, client, session: SESSION }, []);
    assert.deepEqual(calls, [{ method: '_cleveragents/session/show', params: { sessionId: 'sess-1', turns: 1000 } }]);
    assert.equal((res.data as { inputTokens: number }).inputTokens, 7);
    assert.equal(out(), 'cost\t7\t3\t\n');
  });
});

describe('/clear', () => {
  it('creates a session with the same actor, project, skills and context', async () => {
    const fresh = { ...SESSION, id: 'sess-2', taskCount: 0 };
    const { ctx } = fakeRun();
    const { client, calls } = fakeClient({ '_cleveragents/session/create': () => fresh });
    const res = await cmd('clear').run({ ctx, client, session: SESSION }, []);
    assert.deepEqual(calls[0]?.params, { actor: 'local/coder', project: 'web', skills: ['review'], context: 'full' });
    assert.equal(res.session?.id, 'sess-2');
  });
});

describe('/compact and /undo', () => {
  it('refuses a keep that is no number of turns, without calling the agent', async () => {
    const { ctx, err } = fakeRun();
    const { client, calls } = fakeClient({});
    const res = await cmd('compact').run({ ctx, client, session: SESSION }, ['lots']);
    assert.equal(calls.length, 0);
    assert.match(String((res.data as { error: string }).error), /one number of turns to keep \(0-50\)/);
    assert.match(err(), /one number of turns to keep/);
  });

  it('says what /compact summarised', async () => {
    const { ctx, out } = fakeRun('rich');
    const task = {
      ...turn('c1'),
      metadata: { cleveragents: { kind: 'compaction', covers: ['t1', 't2'], turns: 2 } },
      artifacts: [{ artifactId: 'summary', parts: [{ text: 'They fixed the parser.' }] }],
    } as Task;
    const { client, calls } = fakeClient({ '_cleveragents/session/compact': () => ({ task, compacted: 2 }) });
    await cmd('compact').run({ ctx, client, session: SESSION }, ['1']);
    assert.deepEqual(calls[0]?.params, { sessionId: 'sess-1', keepTurns: 1 });
    assert.match(out(), /compaction: 2 turns summarised\nThey fixed the parser\.\n/);
  });

  it("says the agent's refusal of an undo, records it, and the chat goes on", async () => {
    const { ctx, err } = fakeRun('plain');
    const { client } = fakeClient({
      '_cleveragents/session/undo': () => {
        throw new A2AClientError({ code: -32004, message: 'nothing to undo', data: { reason: 'INVALID_STATE' } });
      },
    });
    const res = await cmd('undo').run({ ctx, client, session: SESSION }, []);
    assert.ok((res.data as { error?: unknown }).error, 'the refusal is recorded');
    assert.match(err(), /nothing to undo/);
  });
});
