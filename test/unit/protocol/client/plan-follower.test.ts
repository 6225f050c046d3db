import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  A2AClient,
  followPlan,
  getTask,
  sendMessage,
  subscribeToTask,
  type ApprovalRequest,
  type ClientStreamEvent,
  type ClientTransport,
  type Message,
  type StreamResponse,
  type Task,
} from '../../../../src/protocol/client/index.ts';

const PLAN = 'urn:cleveragents:plan';
const msg = (id: string, text: string, data?: Record<string, unknown>): Message => ({
  messageId: id,
  role: 'ROLE_AGENT',
  parts: [{ text }, ...(data ? [{ data }] : [])],
});
const status = (state: Task['status']['state'], m?: Message, phase?: object): StreamResponse => ({
  statusUpdate: {
    taskId: 't1',
    contextId: 'c',
    status: { state, ...(m ? { message: m } : {}) },
    ...(phase ? { metadata: { [PLAN]: phase } } : {}),
  },
});
const task = (state: Task['status']['state'], history: Message[]): Task => ({
  id: 't1',
  contextId: 'c',
  status: { state, ...(history.at(-1) ? { message: history.at(-1) } : {}) },
  history,
});

/** A transport that streams the scripted subscriptions in turn and records the calls. */
function fakeClient(
  subscriptions: StreamResponse[][],
  read: Task,
): { client: A2AClient; calls: string[]; sent: unknown[] } {
  const calls: string[] = [];
  const sent: unknown[] = [];
  const transport: ClientTransport = {
    kind: 'memory',
    request: (method, params) => {
      calls.push(method);
      if (method === sendMessage.name) sent.push(params);
      if (method === getTask.name) return Promise.resolve(read);
      return Promise.resolve({});
    },
    async *stream(method): AsyncIterable<ClientStreamEvent> {
      calls.push(method);
      const events = subscriptions.shift() ?? [];
      for (const [i, result] of events.entries()) yield { seq: i + 1, result };
    },
    agentCard: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return { client: new A2AClient(transport), calls, sent };
}

const request: ApprovalRequest = {
  kind: 'tool-call',
  step: 1,
  of: 2,
  tool: 'builtin/write-file',
  options: ['approve'],
};

describe('following a plan to its next stop', () => {
  it('reports each message once, the phases, answers an approval on the task and goes on to the end', async () => {
    const ask = msg('m2', 'Approve step 1/2?', { approvalRequest: request });
    const { client, calls, sent } = fakeClient(
      [
        [
          status('TASK_STATE_WORKING', msg('m1', 'Step 1/2'), { planId: 'p', phase: 'execute', state: 'processing' }),
          status('TASK_STATE_INPUT_REQUIRED', ask),
        ],
        [status('TASK_STATE_WORKING', msg('m1', 'Step 1/2')), status('TASK_STATE_COMPLETED', msg('m3', 'Done'))],
      ],
      task('TASK_STATE_WORKING', [msg('m1', 'Step 1/2'), ask]),
    );
    const said: string[] = [];
    const phases: string[] = [];
    const asked: ApprovalRequest[] = [];
    const stop = await followPlan(client, 't1', new AbortController().signal, {
      message: (m, state) => void said.push(`${state}: ${m.parts[0]?.text ?? ''}`),
      phase: (p) => void phases.push(`${p.phase}/${p.state}`),
      decide: (r) => {
        asked.push(r);
        return Promise.resolve({ decision: 'approve' });
      },
      lost: (err) => err as Error,
    });
    assert.deepEqual(said, [
      'TASK_STATE_WORKING: Step 1/2',
      'TASK_STATE_INPUT_REQUIRED: Approve step 1/2?',
      'TASK_STATE_COMPLETED: Done',
    ]);
    assert.deepEqual(phases, ['execute/processing']);
    assert.deepEqual(asked, [request]);
    assert.deepEqual(stop.approvals, [{ request, answer: { decision: 'approve' } }]);
    assert.equal(stop.task?.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(stop.unanswered, undefined);
    // Answered once (the snapshot read after the early end shows the same question), on the task.
    assert.equal(sent.length, 1);
    assert.deepEqual((sent[0] as { message: Message }).message.parts, [
      { data: { approval: { decision: 'approve' } } },
    ]);
    assert.deepEqual(calls, [subscribeToTask.name, sendMessage.name, getTask.name, subscribeToTask.name]);
  });

  it('stops at an approval it cannot answer, keeping the request and the plan error seen on the way', async () => {
    const { client } = fakeClient(
      [
        [
          status('TASK_STATE_WORKING', msg('m1', 'oops', { planError: { kind: 'policy', message: 'no' } })),
          status('TASK_STATE_INPUT_REQUIRED', msg('m2', 'Approve?', { approvalRequest: request })),
        ],
      ],
      task('TASK_STATE_INPUT_REQUIRED', []),
    );
    const stop = await followPlan(client, 't1', new AbortController().signal, {
      decide: () => Promise.resolve(undefined),
      lost: (err) => err as Error,
    });
    assert.deepEqual(stop.unanswered, request);
    assert.deepEqual(stop.planError, { kind: 'policy', message: 'no' });
    assert.deepEqual(stop.approvals, []);
  });

  it('an input request without an approval request is not answered', async () => {
    const { client, sent } = fakeClient(
      [[status('TASK_STATE_INPUT_REQUIRED', msg('m1', 'What now?'))]],
      task('TASK_STATE_INPUT_REQUIRED', []),
    );
    let decided = false;
    const stop = await followPlan(client, 't1', new AbortController().signal, {
      decide: () => {
        decided = true;
        return Promise.resolve({ decision: 'approve' });
      },
      lost: (err) => err as Error,
    });
    assert.equal(decided, false);
    assert.deepEqual(stop.unanswered, { kind: 'tool-call' });
    assert.deepEqual(sent, []);
  });
});
