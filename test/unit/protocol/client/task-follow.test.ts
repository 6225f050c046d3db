import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  A2AClient,
  A2AClientError,
  A2ATransportError,
  getTask,
  subscribeToTask,
  watchTask,
  type ClientStreamEvent,
  type ClientTransport,
  type StreamResponse,
  type Task,
  type TaskWatcher,
} from '../../../../src/protocol/client/index.ts';

const task = (state: Task['status']['state']): Task => ({ id: 't', contextId: 'c', status: { state } });

/** What a server that is shutting down sends last on a task's stream (http.server's farewell). */
const shuttingDown = new A2AClientError({
  code: -32603,
  message: 'the server is shutting down; resubscribe with SubscribeToTask to follow the task',
  data: { reason: 'UNAVAILABLE', type: 'ServiceUnavailableError', correlationId: 'r-1', shuttingDown: true },
});

/**
 * A transport whose first subscription sends the task and then the shutdown farewell; the next
 * ones (the resubscriptions) stream `after`. GetTask answers `read` (a task, or an error to throw).
 */
function fakeClient(read: Task | Error, after: StreamResponse[]): { client: A2AClient; calls: string[] } {
  const calls: string[] = [];
  let subscriptions = 0;
  const transport: ClientTransport = {
    kind: 'memory',
    request: (method) => {
      calls.push(method);
      if (method === getTask.name) return read instanceof Error ? Promise.reject(read) : Promise.resolve(read);
      return Promise.resolve({});
    },
    async *stream(method): AsyncIterable<ClientStreamEvent> {
      calls.push(method);
      if (++subscriptions === 1) {
        yield { seq: 1, result: { task: task('TASK_STATE_WORKING') } };
        throw shuttingDown;
      }
      for (const [i, result] of after.entries()) yield { seq: i + 2, result };
    },
    agentCard: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return { client: new A2AClient(transport), calls };
}

function watcher(): TaskWatcher & { states: string[]; snapshots: string[] } {
  const states: string[] = [];
  const snapshots: string[] = [];
  return {
    states,
    snapshots,
    event: (_seq, _ev, status) => void (status && states.push(status.state)),
    snapshot: (t) => void snapshots.push(t.status.state),
    input: () => Promise.resolve(false),
    lost: (err) => new Error(`lost the agent: ${(err as Error).message}`),
  };
}

describe('watchTask when the server ends the stream because it shuts down', () => {
  it('reads the task and subscribes again, following it to its end', async () => {
    const done: StreamResponse = {
      statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } },
    };
    const { client, calls } = fakeClient(task('TASK_STATE_WORKING'), [{ task: task('TASK_STATE_WORKING') }, done]);
    const w = watcher();
    await watchTask(client, 't', new AbortController().signal, w);
    assert.deepEqual(calls, [subscribeToTask.name, getTask.name, subscribeToTask.name]);
    assert.deepEqual(w.snapshots, ['TASK_STATE_WORKING']);
    assert.equal(w.states.at(-1), 'TASK_STATE_COMPLETED');
  });

  it('reports the agent as lost when nothing answers the read that follows', async () => {
    const { client } = fakeClient(new A2ATransportError('connect ECONNREFUSED 127.0.0.1:8080'), []);
    await assert.rejects(watchTask(client, 't', new AbortController().signal, watcher()), {
      message: 'lost the agent: connect ECONNREFUSED 127.0.0.1:8080',
    });
  });
});
