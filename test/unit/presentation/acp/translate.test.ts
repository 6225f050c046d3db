import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { Part, StreamResponse, Task } from '../../../../src/protocol/client/index.ts';
import { answerOf, permissionOptions, StandingDecisions } from '../../../../src/presentation/acp/acp-approval.ts';
import {
  promptCapabilitiesOf,
  promptParts,
  TurnTranslator,
  UnsupportedContentError,
} from '../../../../src/presentation/acp/translate.ts';

const TS = '2026-01-01T00:00:00Z';
const task = (over: Partial<Task> = {}): Task => ({
  id: 't1',
  contextId: 'c1',
  status: { state: 'TASK_STATE_WORKING', timestamp: TS },
  ...over,
});
const chunk = (text: string, append: boolean): StreamResponse => ({
  artifactUpdate: {
    taskId: 't1',
    contextId: 'c1',
    artifact: { artifactId: 'response', name: 'response', parts: [{ text }] },
    append,
    lastChunk: false,
  },
});
const toolCall = (n: number, data: Record<string, unknown>): StreamResponse => ({
  artifactUpdate: {
    taskId: 't1',
    contextId: 'c1',
    artifact: {
      artifactId: `tool-call-${n}`,
      name: 'tool-call',
      parts: [{ data, mediaType: 'application/json' }],
      metadata: { kind: 'tool-call' },
    },
  },
});
const status = (state: string, parts: Part[] = []): StreamResponse =>
  ({
    statusUpdate: {
      taskId: 't1',
      contextId: 'c1',
      status: {
        state,
        timestamp: TS,
        ...(parts.length ? { message: { messageId: 'm', role: 'ROLE_AGENT', parts } } : {}),
      },
    },
  }) as StreamResponse;

const feed = (tr: TurnTranslator, events: StreamResponse[]): SessionUpdate[] => events.flatMap((e) => tr.push(e));
const texts = (updates: SessionUpdate[]): string[] =>
  updates.flatMap((u) =>
    u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
  );

describe('TurnTranslator', () => {
  it('sends each text delta as an agent_message_chunk, and a tool call as tool_call then tool_call_update', () => {
    const tr = new TurnTranslator('/repo');
    const updates = feed(tr, [
      { task: task() },
      chunk('Hel', false),
      chunk('lo', true),
      toolCall(1, { tool: 'builtin/read-file', callId: 'call_0', arguments: { path: 'a.txt' }, state: 'running' }),
      toolCall(1, {
        tool: 'builtin/read-file',
        callId: 'call_0',
        arguments: { path: 'a.txt' },
        state: 'done',
        ok: true,
        summary: 'read a.txt (1 lines)',
      }),
    ]);
    assert.deepEqual(texts(updates), ['Hel', 'lo']);
    const calls = updates.filter((u) => u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update');
    assert.deepEqual(calls, [
      {
        sessionUpdate: 'tool_call',
        toolCallId: 't1/tool-call-1',
        title: 'builtin/read-file path=a.txt',
        kind: 'read',
        status: 'in_progress',
        rawInput: { path: 'a.txt' },
        locations: [{ path: '/repo/a.txt' }],
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 't1/tool-call-1',
        status: 'completed',
        content: [{ type: 'content', content: { type: 'text', text: 'read a.txt (1 lines)' } }],
        locations: [{ path: '/repo/a.txt' }],
        rawOutput: { state: 'done', ok: true, summary: 'read a.txt (1 lines)' },
      },
    ]);
  });

  it('a stream that starts again with the task as it stands repeats nothing already sent', () => {
    const tr = new TurnTranslator();
    feed(tr, [{ task: task() }, chunk('Before. ', false)]);
    const again = tr.push({
      task: task({ artifacts: [{ artifactId: 'response', name: 'response', parts: [{ text: 'Before. ' }] }] }),
    });
    assert.deepEqual(again, []);
    assert.deepEqual(texts(tr.push(chunk('After.', true))), ['After.']);
  });

  it('the tool call a permission was asked for keeps its id when its artifact comes', () => {
    const tr = new TurnTranslator();
    feed(tr, [{ task: task() }]);
    const asked = tr.approvalCall('t1', {
      kind: 'tool-call',
      tool: 'builtin/write-file',
      args: { path: 'b.txt', content: 'x' },
      options: ['approve', 'reject'],
    });
    assert.equal(asked.status, 'pending');
    assert.equal(asked.kind, 'edit');
    const [declined] = tr.push(
      toolCall(1, { tool: 'builtin/write-file', callId: 'call_9', arguments: {}, state: 'declined', ok: false }),
    );
    assert.ok(declined && declined.sessionUpdate === 'tool_call_update');
    assert.equal(declined.toolCallId, asked.toolCallId);
    assert.equal(declined.status, 'failed');
  });

  it('progress remarks while working are thoughts, not the answer', () => {
    const tr = new TurnTranslator();
    const [u] = feed(tr, [
      { task: task() },
      status('TASK_STATE_WORKING', [{ text: 'local/a failed: local/b answers' }]),
    ]);
    assert.equal(u?.sessionUpdate, 'agent_thought_chunk');
  });

  const endOf = (events: StreamResponse[]) => {
    const tr = new TurnTranslator();
    feed(tr, [{ task: task() }, ...events]);
    return tr.end();
  };

  it('an answer without a task is a message chunk and ends the turn; no answer at all is a failure', () => {
    const tr = new TurnTranslator();
    const updates = tr.push({ message: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text: 'direct' }] } });
    assert.deepEqual(texts(updates), ['direct']);
    assert.deepEqual(tr.end(), { kind: 'stop', stopReason: 'end_turn' });
    assert.equal(new TurnTranslator().end().kind, 'failed');
  });

  it('maps how the task ended to a stop reason', () => {
    assert.deepEqual(endOf([status('TASK_STATE_COMPLETED')]), { kind: 'stop', stopReason: 'end_turn' });
    assert.deepEqual(
      endOf([status('TASK_STATE_COMPLETED', [{ text: 'The answer was cut at maxTokens (10 tokens)' }])]),
      { kind: 'stop', stopReason: 'max_tokens' },
    );
    assert.deepEqual(endOf([status('TASK_STATE_CANCELED')]), { kind: 'stop', stopReason: 'cancelled' });
    assert.deepEqual(endOf([status('TASK_STATE_REJECTED')]), { kind: 'stop', stopReason: 'refusal' });
    assert.deepEqual(
      endOf([status('TASK_STATE_FAILED', [{ text: 'stopped' }, { data: { error: { kind: 'tool-step-limit' } } }])]),
      { kind: 'stop', stopReason: 'max_turn_requests' },
    );
  });

  it('a failure carries its message and hint; an approval and a question are told apart', () => {
    assert.deepEqual(
      endOf([
        status('TASK_STATE_FAILED', [
          { text: 'No API key.' },
          { data: { error: { kind: 'auth', message: 'No API key for local/gpt', hint: 'set OPENAI_API_KEY' } } },
        ]),
      ]),
      { kind: 'failed', message: 'No API key for local/gpt', hint: 'set OPENAI_API_KEY', errorKind: 'auth' },
    );
    const request = { kind: 'tool-call', tool: 'builtin/write-file', args: {}, options: ['approve', 'reject'] };
    const approval = endOf([
      status('TASK_STATE_INPUT_REQUIRED', [{ text: 'Allow?' }, { data: { approvalRequest: request } }]),
    ]);
    assert.deepEqual(approval, { kind: 'approval', taskId: 't1', request, question: 'Allow?' });
    assert.deepEqual(endOf([status('TASK_STATE_INPUT_REQUIRED', [{ text: 'Which branch?' }])]), {
      kind: 'question',
      taskId: 't1',
      text: 'Which branch?',
    });
  });
});

describe('approvals', () => {
  it('offers allow and reject, once and for the session, as far as the task takes them', () => {
    assert.deepEqual(
      permissionOptions(['approve', 'reject', 'reject-with-guidance']).map((o) => o.optionId),
      ['allow_once', 'allow_always', 'reject_once', 'reject_always'],
    );
    assert.deepEqual(
      permissionOptions(['reject']).map((o) => o.kind),
      ['reject_once', 'reject_always'],
    );
  });

  it('reads the outcome: cancelled, a choice, and an option never offered as a rejection', () => {
    assert.deepEqual(answerOf({ outcome: 'cancelled' }), { cancelled: true });
    assert.deepEqual(answerOf({ outcome: 'selected', optionId: 'allow_once' }), { decision: 'approve', always: false });
    assert.deepEqual(answerOf({ outcome: 'selected', optionId: 'yolo' }), { decision: 'reject', always: false });
  });

  it('remembers only "always" decisions, per tool', () => {
    const d = new StandingDecisions();
    d.remember('builtin/write-file', answerOf({ outcome: 'selected', optionId: 'allow_once' }));
    assert.equal(d.of('builtin/write-file'), undefined);
    d.remember('builtin/write-file', answerOf({ outcome: 'selected', optionId: 'reject_always' }));
    assert.equal(d.of('builtin/write-file'), 'reject');
    assert.equal(d.of('builtin/run-command'), undefined);
  });
});

describe('prompts', () => {
  const caps = promptCapabilitiesOf({ defaultInputModes: ['text/plain', 'application/json'] });

  it('takes text and embedded text resources, not images, from a text-only agent card', () => {
    assert.deepEqual(caps, { image: false, audio: false, embeddedContext: true });
    assert.deepEqual(
      promptParts(
        [
          { type: 'text', text: 'see' },
          { type: 'resource_link', name: 'a.ts', uri: 'file:///r/a.ts' },
          { type: 'resource', resource: { uri: 'file:///r/b.ts', text: 'let b' } },
        ],
        caps,
      ),
      [{ text: 'see' }, { text: '[a.ts](file:///r/a.ts)' }, { text: 'Context from file:///r/b.ts:\n```\nlet b\n```' }],
    );
    assert.throws(
      () => promptParts([{ type: 'image', data: 'AAAA', mimeType: 'image/png' }], caps),
      UnsupportedContentError,
    );
    assert.throws(
      () => promptParts([{ type: 'resource', resource: { uri: 'file:///x.bin', blob: 'AAAA' } }], caps),
      /binary resource file:\/\/\/x\.bin/,
    );
  });
});
