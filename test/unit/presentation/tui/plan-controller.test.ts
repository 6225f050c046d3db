import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  A2AClient,
  getTask,
  planStatus,
  planTree,
  subscribeToTask,
  type ClientStreamEvent,
  type ClientTransport,
  type StreamResponse,
} from '../../../../src/protocol/client/index.ts';
import { Guard } from '../../../../src/presentation/tui/guard.ts';
import { PlanController } from '../../../../src/presentation/tui/plan-controller.ts';
import { Store } from '../../../../src/presentation/tui/store.ts';

const status = (state: string, running: boolean, stepsDone: number): unknown => ({
  planId: 'p',
  phase: 'execute',
  state,
  running,
  tasks: { execute: 't1' },
  progress: { stepsDone, stepsTotal: 2 },
  checkpoints: [],
});
const event = (state: string): StreamResponse =>
  ({ statusUpdate: { taskId: 't1', contextId: 'c', status: { state } } }) as StreamResponse;

/**
 * A backend whose plan runs: plan/status answers in turn (the last repeats); the task's stream
 * gives `events` and then, unless the last ends the task, stays open until it is let go.
 */
function backend(statuses: unknown[], events: StreamResponse[]) {
  const calls: string[] = [];
  let released: AbortSignal | undefined;
  const transport: ClientTransport = {
    kind: 'memory',
    request: (method, _params, opts) => {
      if (opts?.signal?.aborted) return Promise.reject(new Error('aborted'));
      calls.push(method);
      if (method === planStatus.name) return Promise.resolve(statuses.length > 1 ? statuses.shift() : statuses[0]);
      if (method === planTree.name) return Promise.resolve({ decisions: [] });
      if (method === getTask.name) return Promise.resolve({ id: 't1', contextId: 'c', status: { state: 'x' } });
      return Promise.resolve({});
    },
    async *stream(method, _params, opts): AsyncIterable<ClientStreamEvent> {
      calls.push(method);
      released = opts?.signal;
      for (const [i, result] of events.entries()) yield { seq: i + 1, result };
      const last = events.at(-1);
      if (last && 'statusUpdate' in last && last.statusUpdate.status.state === 'TASK_STATE_COMPLETED') return;
      if (!opts?.signal?.aborted)
        await new Promise((resolve) => opts?.signal?.addEventListener('abort', resolve, { once: true }));
    },
    agentCard: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return { client: new A2AClient(transport), calls, released: () => released };
}

const until = async (what: () => boolean): Promise<void> => {
  while (!what()) await new Promise((resolve) => setImmediate(resolve));
};

describe('the TUI plan view', () => {
  it('follows a running plan from its task’s events to its settled end, on one subscription', async () => {
    const { client, calls } = backend(
      [
        status('processing', true, 0),
        status('processing', true, 1),
        status('complete', true, 2), // read at the last event, before the run let go
        status('complete', false, 2),
      ],
      [event('TASK_STATE_WORKING'), event('TASK_STATE_COMPLETED')],
    );
    const store = new Store();
    const plans = new PlanController(client, store, new Guard(store, { kind: 'local' } as never));
    const seen: string[] = [];
    store.subscribe(() => {
      const s = store.get().plan.status as { state: string; running: boolean; progress: { stepsDone: number } };
      const line = s ? `${s.state}${s.running ? ' running' : ''} ${s.progress.stepsDone}` : '';
      if (line && seen.at(-1) !== line) seen.push(line);
    });
    await plans.open('p');
    await until(() => seen.at(-1) === 'complete 2');
    assert.deepEqual(seen, ['processing running 0', 'processing running 1', 'complete running 2', 'complete 2']);
    assert.equal(calls.filter((c) => c === subscribeToTask.name).length, 1, 'one subscription, no polling');
    plans.close();
  });

  it('lets go of a running plan when its view closes', async () => {
    const { client, released } = backend([status('processing', true, 0)], [event('TASK_STATE_WORKING')]);
    const store = new Store();
    const plans = new PlanController(client, store, new Guard(store, { kind: 'local' } as never));
    await plans.open('p');
    await until(() => released() !== undefined);
    assert.equal(released()?.aborted, false, 'watched while the view is open');
    store.dispatch({ type: 'view', view: 'chat' });
    assert.equal(released()?.aborted, true, 'the subscription is closed');
    plans.close();
  });
});
