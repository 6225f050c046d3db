import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  A2AClient,
  planStatus,
  runningTaskOf,
  subscribeToTask,
  watchPlan,
  type ClientStreamEvent,
  type ClientTransport,
  type StreamResponse,
  type Task,
  type WatchedPlanStatus,
} from '../../../../src/protocol/client/index.ts';

type Status = Pick<WatchedPlanStatus, 'phase' | 'state' | 'running' | 'tasks'> & Partial<WatchedPlanStatus>;

const plan = (phase: string, state: string, running: boolean, tasks: Record<string, string>, more = {}): Status =>
  ({ planId: 'p', phase, state, running, tasks, ...more }) as Status;

const event = (taskId: string, state: Task['status']['state']): StreamResponse => ({
  statusUpdate: { taskId, contextId: 'c', status: { state } },
});
const artifact = (taskId: string, tool: string): StreamResponse => ({
  artifactUpdate: {
    taskId,
    contextId: 'c',
    append: true,
    artifact: { artifactId: 'execution-log', parts: [{ data: { tool, ok: true } }] },
  },
});
const snapshot = (id: string, state: Task['status']['state']): StreamResponse => ({
  task: { id, contextId: 'c', status: { state } },
});

/**
 * A transport whose plan/status answers are scripted in turn (the last one repeats), whose
 * subscriptions stream the scripted events per task and then wait for the abort (or end, when
 * the task's last event is terminal), recording every call.
 */
function fakeClient(
  statuses: Status[],
  streams: Record<string, StreamResponse[]>,
): { client: A2AClient; calls: string[] } {
  const calls: string[] = [];
  const transport: ClientTransport = {
    kind: 'memory',
    request: (method, _params, opts) => {
      // As the real transports do: a request on an aborted signal is not sent.
      if (opts?.signal?.aborted) return Promise.reject(new Error('aborted'));
      calls.push(method);
      if (method === planStatus.name) return Promise.resolve(statuses.length > 1 ? statuses.shift() : statuses[0]);
      return Promise.resolve({});
    },
    async *stream(method, params, opts): AsyncIterable<ClientStreamEvent> {
      const id = (params as { id: string }).id;
      calls.push(`${method} ${id}`);
      const events = streams[id] ?? [];
      for (const [i, result] of events.entries()) yield { seq: i + 1, result };
      const last = events.at(-1);
      if (last && 'statusUpdate' in last && last.statusUpdate.status.state === 'TASK_STATE_COMPLETED') return;
      // A task that waits: the subscription stays open until the watcher lets go.
      if (!opts?.signal?.aborted)
        await new Promise((resolve) => opts?.signal?.addEventListener('abort', resolve, { once: true }));
    },
    agentCard: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return { client: new A2AClient(transport), calls };
}

describe('watching a plan a person looks at', () => {
  it('reads a plan that does not run once, and subscribes to nothing', async () => {
    const { client, calls } = fakeClient([plan('execute', 'complete', false, { execute: 't1' })], {});
    const seen: string[] = [];
    await watchPlan(client, 'p', new AbortController().signal, {
      status: (s) => void seen.push(`${s.phase}/${s.state}`),
      lost: (err) => err as Error,
    });
    assert.deepEqual(seen, ['execute/complete']);
    assert.deepEqual(calls, [planStatus.name]);
  });

  it('follows the running phase, reads the status at each of its status events, then the next phase to the end', async () => {
    const { client, calls } = fakeClient(
      [
        plan('execute', 'processing', true, { execute: 't1' }),
        plan('execute', 'processing', true, { execute: 't1' }, { progress: { stepsDone: 1, stepsTotal: 2 } }),
        plan('apply', 'processing', true, { execute: 't1', apply: 't2' }),
        plan('apply', 'processing', true, { execute: 't1', apply: 't2' }),
        plan('apply', 'processing', true, { execute: 't1', apply: 't2' }),
        plan('apply', 'complete', false, { execute: 't1', apply: 't2' }),
      ],
      {
        t1: [snapshot('t1', 'TASK_STATE_WORKING'), artifact('t1', 'builtin/edit'), event('t1', 'TASK_STATE_COMPLETED')],
        t2: [snapshot('t2', 'TASK_STATE_WORKING'), event('t2', 'TASK_STATE_COMPLETED')],
      },
    );
    const seen: string[] = [];
    const tasks: string[] = [];
    await watchPlan(client, 'p', new AbortController().signal, {
      status: (s) => void seen.push(`${s.phase}/${s.state}`),
      task: (t) => void tasks.push(`${t.id}:${t.artifacts?.length ?? 0}`),
      lost: (err) => err as Error,
    });
    assert.deepEqual(seen, [
      'execute/processing', // at the start
      'execute/processing', // t1's snapshot
      'apply/processing', // t1 completed (the plan already moved on)
      'apply/processing', // after t1 ended: the next phase's task to follow
      'apply/processing', // t2's snapshot
      'apply/complete', // t2 completed
      'apply/complete', // after t2 ended
    ]);
    // The execute task's tool calls arrive between status reads (the artifact event).
    assert.deepEqual(tasks, ['t1:0', 't1:1', 't1:1', 't2:0', 't2:0']);
    assert.deepEqual(
      calls.filter((c) => c !== planStatus.name),
      [`${subscribeToTask.name} t1`, `${subscribeToTask.name} t2`],
    );
  });

  it('watches a waiting plan without answering it, until its owner aborts (and resolves quietly)', async () => {
    const { client, calls } = fakeClient(
      [plan('execute', 'processing', true, { execute: 't1' }, { waiting: { kind: 'tool-approval', taskId: 't1' } })],
      { t1: [snapshot('t1', 'TASK_STATE_INPUT_REQUIRED'), event('t1', 'TASK_STATE_INPUT_REQUIRED')] },
    );
    const stop = new AbortController();
    let reads = 0;
    await watchPlan(client, 'p', stop.signal, {
      status: () => {
        // The start, the snapshot, the input-required event: then the view closes.
        if (++reads === 3) stop.abort();
      },
      lost: (err) => err as Error,
    });
    assert.equal(reads, 3);
    assert.deepEqual(
      calls.filter((c) => c !== planStatus.name),
      [`${subscribeToTask.name} t1`],
      'one subscription, kept open: nothing answered, no task read',
    );
  });

  it('reads again, a few times, a status that still calls the ended task running', async () => {
    const { client } = fakeClient(
      [
        plan('execute', 'processing', true, { execute: 't1' }),
        plan('execute', 'processing', true, { execute: 't1' }),
        plan('execute', 'processing', true, { execute: 't1' }),
        plan('execute', 'processing', true, { execute: 't1' }),
        plan('execute', 'complete', false, { execute: 't1' }),
      ],
      { t1: [snapshot('t1', 'TASK_STATE_WORKING'), event('t1', 'TASK_STATE_COMPLETED')] },
    );
    const seen: string[] = [];
    await watchPlan(client, 'p', new AbortController().signal, {
      status: (s) => void seen.push(`${s.phase}/${s.state}${s.running ? ' running' : ''}`),
      lost: (err) => err as Error,
    });
    assert.equal(seen.at(-1), 'execute/complete', 'the view ends on the plan as it settled');
  });

  it('a read that fails rejects the watch', async () => {
    const transport: ClientTransport = {
      kind: 'memory',
      request: () => Promise.reject(new Error('refused')),
      // eslint-disable-next-line require-yield
      async *stream(): AsyncIterable<ClientStreamEvent> {
        return;
      },
      agentCard: () => Promise.resolve({}),
      close: () => Promise.resolve(),
    };
    await assert.rejects(
      watchPlan(new A2AClient(transport), 'p', new AbortController().signal, {
        status: () => undefined,
        lost: (err) => err as Error,
      }),
      /refused/,
    );
  });
});

describe('the task a plan runs on', () => {
  it('is the waiting task, else the running phase’s, else none', () => {
    const waiting = { kind: 'tool-approval', taskId: 't9' } as const;
    assert.equal(runningTaskOf(plan('execute', 'processing', true, { execute: 't1' }) as WatchedPlanStatus), 't1');
    assert.equal(
      runningTaskOf(plan('execute', 'processing', false, { execute: 't1' }, { waiting }) as WatchedPlanStatus),
      't9',
    );
    assert.equal(runningTaskOf(plan('execute', 'complete', false, { execute: 't1' }) as WatchedPlanStatus), undefined);
  });
});
