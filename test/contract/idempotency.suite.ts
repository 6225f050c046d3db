/**
 * Idempotent sends (issue #8, defect 6): a message resent with the same messageId answers from
 * the task it started — no second task, no second turn — and the same id with other content is
 * refused. Fails on the main before the fix: every resend created a new task in a new context.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, it } from 'node:test';
import {
  A2AClient,
  listTasks,
  sendMessage,
  sendStreamingMessage,
  sessionCreate,
  getTask,
} from '../../src/protocol/client/index.ts';
import type { Harness } from '../support/harness.ts';
import { collect, kindOf, rpcError, taskOf, userMessage } from './a2a.suite.ts';
import type { SuiteContext } from './suite-context.ts';

export function idempotencySuite(ctx: SuiteContext): void {
  let h: Harness;
  let client: A2AClient;
  let conformance: string;
  before(async () => {
    h = ctx.harness();
    client = h.client;
    conformance = (await client.call(sessionCreate, { actor: 'builtin/conformance', title: 'idempotency' })).id;
  });

  const total = async (): Promise<number> => (await client.call(listTasks, { pageSize: 1 })).totalSize;

  it('answers a resent SendMessage with the original task and creates no second task', async () => {
    const message = userMessage('only once');
    const first = taskOf(await client.call(sendMessage, { message }));
    const count = await total();
    const again = taskOf(await client.call(sendMessage, { message }));
    assert.equal(again.id, first.id);
    assert.equal(again.contextId, first.contextId);
    assert.deepEqual(again, first, 'the same task, as it stands');
    assert.equal(await total(), count, 'no second task');
    assert.equal((await client.call(listTasks, { contextId: first.contextId })).totalSize, 1);
    ctx.record('idempotency.resend', { same: again.id === first.id, state: again.status.state });
  });

  it('refuses the same messageId with different content, naming the field, and stores nothing', async () => {
    const messageId = randomUUID();
    const first = taskOf(await client.call(sendMessage, { message: userMessage('original', { messageId }) }));
    const count = await total();
    const err = await rpcError(
      client.call(sendMessage, { message: userMessage('something else', { messageId }) }),
      -32602,
      'ValidationError',
    );
    assert.match(err.message, /already used with different content/);
    await rpcError(
      collect(
        client.stream(sendStreamingMessage, {
          message: userMessage('original', { messageId, contextId: first.contextId }),
        }),
      ),
      -32602,
      'ValidationError',
    );
    assert.equal(await total(), count);
    assert.deepEqual(await client.call(getTask, { id: first.id }), first);
  });

  it('waits on a blocking resend until the task settles, as the first send did', async () => {
    const message = userMessage('slow', { messageId: `tck-long-running-${randomUUID()}`, contextId: conformance });
    const started = taskOf(await client.call(sendMessage, { message, configuration: { returnImmediately: true } }));
    assert.notEqual(started.status.state, 'TASK_STATE_COMPLETED');
    const now = taskOf(await client.call(sendMessage, { message, configuration: { returnImmediately: true } }));
    assert.equal(now.id, started.id, 'returnImmediately: the current state of the same task');
    const settled = taskOf(await client.call(sendMessage, { message }));
    assert.equal(settled.id, started.id);
    assert.equal(settled.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(
      (await client.call(listTasks, { contextId: conformance, pageSize: 100 })).tasks.filter((t) => t.id === started.id)
        .length,
      1,
    );
  });

  it('answers a blocking resend at once when the actor ended its turn leaving the task working, as the first send did', async () => {
    const message = userMessage('park it', { contextId: conformance });
    const first = taskOf(await client.call(sendMessage, { message }));
    assert.equal(first.status.state, 'TASK_STATE_WORKING');
    const again = taskOf(await client.call(sendMessage, { message }));
    assert.equal(again.id, first.id);
    assert.equal(again.status.state, 'TASK_STATE_WORKING');
    const streamed = await collect(client.stream(sendStreamingMessage, { message }));
    assert.deepEqual(
      streamed.map((e) => kindOf(e.event)),
      ['task'],
      'the task as it stands, and the stream ends',
    );
  });

  it('re-streams a resent SendStreamingMessage from the stored task instead of starting a second turn', async () => {
    const message = userMessage('stream once', {
      messageId: `tck-complete-task-${randomUUID()}`,
      contextId: conformance,
    });
    const first = await collect(client.stream(sendStreamingMessage, { message }));
    const firstTask = first[0]?.event;
    assert.ok(firstTask && 'task' in firstTask);
    const count = await total();
    const again = await collect(client.stream(sendStreamingMessage, { message }));
    const head = again[0]?.event;
    assert.ok(head && 'task' in head, `the task first (got ${again.map((e) => kindOf(e.event)).join(',')})`);
    assert.equal(head.task.id, firstTask.task.id);
    assert.equal(head.task.status.state, 'TASK_STATE_COMPLETED', 'the task as it stands');
    assert.equal(head.task.artifacts?.[0]?.parts[0]?.text, 'Task completed successfully');
    assert.equal(again.length, 1, 'a settled task: nothing follows');
    assert.equal(await total(), count, 'no second task');
  });

  it('lets one of two concurrent sends of the same message create the task; the other answers with it', async () => {
    const message = userMessage('race', { messageId: `tck-complete-task-${randomUUID()}`, contextId: conformance });
    const count = await total();
    const [a, b] = await Promise.all([client.call(sendMessage, { message }), client.call(sendMessage, { message })]);
    assert.equal(taskOf(a).id, taskOf(b).id);
    assert.equal(await total(), count + 1);
  });

  it('is idempotent for a follow-up on an existing task too', async () => {
    const t = taskOf(
      await client.call(sendMessage, {
        message: userMessage('need input', { messageId: `tck-input-required-${randomUUID()}`, contextId: conformance }),
      }),
    );
    assert.equal(t.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const answer = userMessage('here it is', { taskId: t.id });
    const done = taskOf(await client.call(sendMessage, { message: answer }));
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
    // A completed task accepts no further messages, but a resend of the same answer is no new message.
    const again = taskOf(await client.call(sendMessage, { message: answer }));
    assert.equal(again.id, t.id);
    assert.equal(
      again.history?.filter((m) => m.messageId === answer.messageId).length,
      1,
      'the answer is in the history once',
    );
    await rpcError(
      client.call(sendMessage, { message: { ...answer, parts: [{ text: 'changed my mind' }] } }),
      -32602,
      'ValidationError',
    );
  });
}
