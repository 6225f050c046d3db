/**
 * Compaction over fake ports: which turns a session's history keeps once compacted, which turns a
 * compaction takes, when an LLM turn compacts, and what the summariser is sent when the turns do
 * not fit its window.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageTokens } from '../../../../src/application/actors/llm/history.ts';
import { silentLogger } from '../../../../src/application/ports/logger.port.ts';
import type { ModelRequest, TokenCounter } from '../../../../src/application/ports/language-model.port.ts';
import type { StoredTask } from '../../../../src/application/ports/task.repository.port.ts';
import {
  compactionSection,
  sessionHistory,
  turnsToCompact,
  turnText,
} from '../../../../src/application/sessions/session-history.ts';
import { CompactionService } from '../../../../src/application/sessions/compaction.service.ts';
import type { Task, TaskState } from '../../../../src/domain/a2a.model.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';
import type { Session } from '../../../../src/domain/session.ts';

/** A token is four characters here. */
const tokens: TokenCounter = { count: (t) => Promise.resolve(Math.ceil(t.length / 4)) };

function turn(id: string, asked: string, answer: string, state: TaskState = 'TASK_STATE_COMPLETED'): StoredTask {
  return {
    owner: 'local',
    seq: 1,
    task: {
      id,
      contextId: 'ctx',
      status: { state },
      history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: asked }] }],
      artifacts: [{ artifactId: 'response', name: 'response', parts: [{ text: answer }] }],
    },
  };
}

function compaction(id: string, covers: string[], summary: string): StoredTask {
  return {
    owner: 'local',
    seq: 0,
    task: {
      id,
      contextId: 'ctx',
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ artifactId: 'summary', name: 'summary', parts: [{ text: summary }] }],
      metadata: { cleveragents: { kind: 'compaction', covers, turns: covers.length } },
    },
  };
}

const ids = (ts: Array<{ task: Task }>): string[] => ts.map((t) => t.task.id);

describe('sessionHistory', () => {
  it('uses the compaction covering most turns and leaves out the turns it covers', () => {
    const stored = [
      turn('t1', 'a', 'A'),
      turn('t2', 'b', 'B'),
      compaction('c2', ['t1', 't2', 't3'], 'newer'),
      turn('t3', 'c', 'C'),
      // An older compaction listed later (same instant): still the one covering fewer turns.
      compaction('c1', ['t1'], 'older'),
      turn('t4', 'd', 'D'),
      turn('now', 'e', 'E', 'TASK_STATE_WORKING'),
    ];
    const h = sessionHistory(stored, new Map(), 'now');
    assert.equal(h.compaction?.taskId, 'c2');
    assert.equal(h.compaction?.summary, 'newer');
    assert.deepEqual(ids(h.turns), ['t4']);
    assert.deepEqual(h.turns[0]?.messages, [
      { role: 'user', text: 'd' },
      { role: 'assistant', text: 'D' },
    ]);
  });

  it('without a compaction every turn is kept', () => {
    const h = sessionHistory([turn('t1', 'a', 'A'), turn('t2', 'b', 'B')], new Map());
    assert.equal(h.compaction, undefined);
    assert.deepEqual(ids(h.turns), ['t1', 't2']);
  });
});

describe('turnsToCompact', () => {
  it('keeps the newest turns and any turn still waiting for an answer', () => {
    const h = sessionHistory(
      [
        turn('t1', 'a', 'A'),
        turn('t2', 'b', 'B', 'TASK_STATE_INPUT_REQUIRED'),
        turn('t3', 'c', 'C', 'TASK_STATE_FAILED'),
        turn('t4', 'd', 'D'),
      ],
      new Map(),
    );
    assert.deepEqual(ids(turnsToCompact(h, 1)), ['t1', 't3']);
    assert.deepEqual(ids(turnsToCompact(h, 0)), ['t1', 't3', 't4']);
    assert.deepEqual(ids(turnsToCompact(h, 4)), []);
  });
});

describe('what the model is told', () => {
  it('the system prompt section names the summarised turns (all when few, the ends when many)', () => {
    const few = compactionSection({ taskId: 'c', covers: ['t1', 't2'], summary: 'S' });
    assert.match(
      few,
      /^Earlier in this session 2 turns were compacted .*compaction task c; summarised turns: t1, t2\)/,
    );
    assert.match(few, /<summary>\nS\n<\/summary>$/);
    const many = compactionSection({
      taskId: 'c',
      covers: Array.from({ length: 30 }, (_, i) => `t${i}`),
      summary: 'S',
    });
    assert.match(many, /t0, t1, t2, t3, t4, … \(20 more\) …, t25, t26, t27, t28, t29\)/);
    assert.equal(compactionSection(undefined), '');
  });

  it('a turn is written out with its tool calls and results, long outputs cut', () => {
    const text = turnText({
      task: turn('t', 'x', 'y').task,
      messages: [
        { role: 'user', text: 'read a.txt' },
        { role: 'assistant', text: '', toolCalls: [{ id: '1', name: 'read', arguments: '{"path":"a.txt"}' }] },
        { role: 'tool', results: [{ id: '1', name: 'read', output: 'z'.repeat(2000), isError: false }] },
        { role: 'assistant', text: 'done' },
      ],
    });
    assert.match(
      text,
      /^User: read a\.txt\nAssistant called read with \{"path":"a\.txt"\}\nResult of read: z+ … \(500 more characters\)\nAssistant: done$/,
    );
  });
});

describe('CompactionService', () => {
  const session: Session = {
    id: 'ctx',
    owner: 'ns',
    actor: 'local/a',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    taskCount: 0,
  };

  function service(actors: Record<string, ActorDefinition> = {}) {
    const requests: ModelRequest[] = [];
    const created: Array<{ task: Task; owner: string }> = [];
    const recorded: string[] = [];
    const svc = new CompactionService({
      tasks: {
        create: (task, owner) => {
          created.push({ task, owner });
          return Promise.resolve();
        },
        listByContext: () => Promise.resolve([]),
      },
      llm: {
        models: {
          async *stream(req) {
            requests.push(req);
            await Promise.resolve();
            yield { type: 'text', delta: 'the summary' };
            yield { type: 'finish', reason: 'stop', usage: { inputTokens: 7, outputTokens: 3 } };
          },
          check: () => Promise.resolve({ ok: true, detail: '' }),
        },
        keys: { resolve: () => Promise.resolve({ present: false, problem: 'none needed' }) },
        tokens,
        transcripts: {
          get: () => Promise.resolve(undefined),
          save: () => Promise.resolve(),
          forContext: () => Promise.resolve(new Map()),
        },
      },
      actor: (name) => Promise.resolve(actors[name]),
      session: () => Promise.resolve(session),
      recordTask: (id) => {
        recorded.push(id);
        return Promise.resolve();
      },
      logger: silentLogger,
    });
    return { svc, requests, created, recorded };
  }

  const def = (extra: Partial<ActorDefinition> = {}): ActorDefinition => ({
    name: 'local/a',
    provider: 'openai-compatible',
    model: 'm',
    baseUrl: 'http://127.0.0.1:1/v1',
    contextWindow: 1000,
    ...extra,
  });
  /** Turns of about 100 tokens each. */
  const history = (n: number) =>
    sessionHistory(
      Array.from({ length: n }, (_, i) => turn(`t${i + 1}`, `question ${i + 1}`, `${i + 1} `.repeat(190))),
      new Map(),
    );
  const check = (d: ActorDefinition, turns: number) => ({
    actorName: 'local/a',
    def: d,
    session,
    history: history(turns),
    tokens: new MessageTokens(tokens),
    signal: new AbortController().signal,
  });

  it('does nothing below the threshold, nor when disabled', async () => {
    const { svc, requests } = service();
    assert.equal(await svc.compactIfDue(check(def({ compaction: { threshold: 0.5 } }), 4)), undefined);
    assert.equal(await svc.compactIfDue(check(def({ compaction: { threshold: 0.1, enabled: false } }), 4)), undefined);
    assert.equal(requests.length, 0);
  });

  it('past the threshold summarises all but the kept turns and stores the compaction for the owner', async () => {
    const { svc, requests, created, recorded } = service();
    const h = await svc.compactIfDue(check(def({ compaction: { threshold: 0.3, keepTurns: 2 } }), 4));
    assert.deepEqual(ids(h?.turns ?? []), ['t3', 't4']);
    assert.deepEqual(h?.compaction?.covers, ['t1', 't2']);
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0]?.tools, []);
    assert.equal(created.length, 1);
    assert.equal(created[0]?.owner, 'ns');
    assert.equal(created[0]?.task.id, h?.compaction?.taskId);
    assert.deepEqual(recorded, ['ctx']);
  });

  it('sends the summariser the newest turns that fit its window and says how many were left out', async () => {
    const small: ActorDefinition = { ...def({ name: 'local/s', contextWindow: 700, maxTokens: 100 }) };
    const { svc, requests, created } = service({ 'local/s': small });
    await svc.compactIfDue(check(def({ compaction: { threshold: 0.1, keepTurns: 0, summarizer: 'local/s' } }), 8));
    const sent = requests[0];
    assert.equal(sent?.actor.name, 'local/s');
    const text = sent?.messages[0]?.role === 'user' ? sent.messages[0].text : '';
    assert.match(text, /\((\d) older turns are too long to show here and left out\.\)/);
    assert.match(text, /question 8/);
    assert.doesNotMatch(text, /question 1\n/);
    // Every turn is covered: the summary stands in for all of them.
    const meta = created[0]?.task.metadata?.['cleveragents'] as { covers: string[]; actor: string };
    assert.equal(meta.covers.length, 8);
    assert.equal(meta.actor, 'local/s');
  });

  it('refuses a summariser that is a built-in actor (the turn then goes on without)', async () => {
    const echo: ActorDefinition = { name: 'builtin/echo', provider: 'builtin', model: 'echo' };
    const { svc, requests } = service({ 'builtin/echo': echo });
    const h = await svc.compactIfDue(
      check(def({ compaction: { threshold: 0.1, keepTurns: 0, summarizer: 'builtin/echo' } }), 3),
    );
    assert.equal(h, undefined);
    assert.equal(requests.length, 0);
  });
});
