import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  A2AClient,
  A2AClientError,
  type ClientStreamEvent,
  type ClientTransport,
} from '../../../../../src/protocol/client/index.ts';
import { TurnCancel } from '../../../../../src/presentation/cli/support/turn-cancel.ts';

type Answer = (params: unknown, signal: AbortSignal | undefined) => Promise<unknown>;

/** A transport whose CancelTask answers as the test says, and that records the calls. */
function fakeClient(answer: Answer): { client: A2AClient; calls: Array<{ method: string; params: unknown }> } {
  const calls: Array<{ method: string; params: unknown }> = [];
  const transport: ClientTransport = {
    kind: 'memory',
    request(method, params, opts) {
      calls.push({ method, params });
      return answer(params, opts?.signal);
    },
    // eslint-disable-next-line require-yield -- no stream is asked for
    async *stream(): AsyncIterable<ClientStreamEvent> {
      throw new Error('not used');
    },
    agentCard: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return { client: new A2AClient(transport), calls };
}

const canceledTask = (id: string): unknown => ({
  id,
  contextId: 'c1',
  status: { state: 'TASK_STATE_CANCELED' },
  artifacts: [{ artifactId: 'response', parts: [{ text: 'so far' }] }],
});

/** An answer that never comes, unless the request is aborted (then it rejects with the reason). */
const never: Answer = (_p, signal) =>
  new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));

describe('TurnCancel', () => {
  it('cancels the known task and keeps the canceled task; the turn request is left to end by itself', async () => {
    const { client, calls } = fakeClient((p) => Promise.resolve(canceledTask((p as { id: string }).id)));
    const turn = new TurnCancel(client);
    turn.know('t1');
    const outcome = await turn.cancel();
    assert.deepEqual(calls, [{ method: 'CancelTask', params: { id: 't1' } }]);
    assert.equal(outcome.kind, 'canceled');
    assert.equal(outcome.kind === 'canceled' && outcome.task.status.state, 'TASK_STATE_CANCELED');
    assert.equal(turn.signal.aborted, false, 'the stream still brings the final event');
    assert.equal(await turn.cancel(), outcome, 'once');
  });

  it('asked before the task is known, cancels it as soon as the stream names it', async () => {
    const { client, calls } = fakeClient((p) => Promise.resolve(canceledTask((p as { id: string }).id)));
    const turn = new TurnCancel(client);
    const pending = turn.cancel();
    await Promise.resolve();
    assert.deepEqual(calls, [], 'nothing to cancel yet');
    turn.know('t2');
    assert.equal((await pending).kind, 'canceled');
    assert.deepEqual(calls, [{ method: 'CancelTask', params: { id: 't2' } }]);
  });

  it('a turn that ended without naming a task has nothing to cancel', async () => {
    const { client, calls } = fakeClient(never);
    const turn = new TurnCancel(client);
    const pending = turn.cancel();
    turn.ended();
    assert.deepEqual(await pending, { kind: 'ended' });
    assert.deepEqual(calls, []);
  });

  it('finds the task with findTask when the request names none (a blocking send)', async () => {
    const { client, calls } = fakeClient((p) => Promise.resolve(canceledTask((p as { id: string }).id)));
    const turn = new TurnCancel(client, { findTask: () => Promise.resolve('t3') });
    assert.equal((await turn.cancel()).kind, 'canceled');
    assert.deepEqual(calls, [{ method: 'CancelTask', params: { id: 't3' } }]);
  });

  it('a task that finished first is no failure: its request ends with how it ended', async () => {
    const { client } = fakeClient(() =>
      Promise.reject(
        new A2AClientError({
          code: -32002,
          message: 'Task t4 is already completed and cannot be canceled',
          data: { reason: 'TASK_NOT_CANCELABLE' },
        }),
      ),
    );
    const turn = new TurnCancel(client);
    turn.know('t4');
    assert.deepEqual(await turn.cancel(), { kind: 'ended' });
    assert.equal(turn.signal.aborted, false);
  });

  it('a refused cancel gives the turn up at once, saying why', async () => {
    const refused = new A2AClientError({
      code: -32001,
      message: 'Task t5 not found',
      data: { reason: 'TASK_NOT_FOUND' },
    });
    const { client } = fakeClient(() => Promise.reject(refused));
    const turn = new TurnCancel(client);
    turn.know('t5');
    assert.deepEqual(await turn.cancel(), { kind: 'unconfirmed', taskId: 't5', problem: refused });
    assert.equal(turn.signal.aborted, true, 'the turn request is not waited for');
  });

  it('an agent that does not answer: the wait is bounded, and the turn request is given up', async () => {
    const { client } = fakeClient(never);
    const turn = new TurnCancel(client, { waitMs: 50 });
    turn.know('t6');
    const outcome = await turn.cancel();
    assert.equal(outcome.kind, 'unconfirmed');
    assert.match(String((outcome as { problem: Error }).problem.message), /did not confirm the cancel within 1 s/);
    assert.equal(turn.signal.aborted, true);
  });

  it('abandon (a second Ctrl-C) stops waiting for the cancel and the turn at once', async () => {
    const { client } = fakeClient(never);
    const turn = new TurnCancel(client);
    turn.know('t7');
    const pending = turn.cancel();
    turn.abandon();
    const outcome = await pending;
    assert.equal(outcome.kind, 'unconfirmed');
    assert.match(String((outcome as { problem: Error }).problem.message), /stopped waiting/);
    assert.equal(turn.signal.aborted, true);
  });
});
