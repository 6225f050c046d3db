/**
 * Interop, the other direction: OUR typed client (`A2AClient.remote`) against a plain
 * `@a2a-js/sdk` 1.3 server. Every result is also checked against the schema of the method row it
 * was called with, since callers of our client rely on those types.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  A2AClient,
  A2AClientError,
  cancelTask,
  createPushConfig,
  deletePushConfig,
  getPushConfig,
  getTask,
  listPushConfigs,
  listTasks,
  sendMessage,
  sendStreamingMessage,
  subscribeToTask,
  type MethodContract,
  type StreamResponse,
  type Task,
} from '../../src/protocol/client/index.ts';
import { collect, mid, withTimeout } from './support/cleveragents.ts';
import { startSdkServer, type SdkServer } from './support/sdk-reference-server.ts';

const CALL_MS = 10_000;
const STREAM_MS = 10_000;

const userMessage = (text: string, extra: { taskId?: string; contextId?: string } = {}) => ({
  messageId: mid(),
  role: 'ROLE_USER' as const,
  parts: [{ text }],
  ...extra,
});
const textOf = (parts: Array<{ text?: string | undefined }> | undefined): string =>
  (parts ?? []).map((p) => p.text ?? '').join('');

/** The value conforms to what our method row promises its callers. */
function conforms(method: MethodContract, value: unknown): void {
  const r = method.result.safeParse(value);
  assert.ok(
    r.success,
    `${method.name} result does not match our schema: ${r.success ? '' : JSON.stringify(r.error.issues).slice(0, 800)}\n${JSON.stringify(value).slice(0, 800)}`,
  );
}

function taskOf(r: { task: Task } | { message: unknown }): Task {
  assert.ok('task' in r, `expected a task: ${JSON.stringify(r)}`);
  return r.task;
}

describe('CleverAgents client → plain @a2a-js/sdk 1.3 server', { timeout: 60_000 }, () => {
  let sdk: SdkServer;
  let client: A2AClient;

  before(async () => {
    sdk = await startSdkServer();
    client = A2AClient.remote({ url: sdk.baseUrl });
  });
  after(async () => {
    await client?.close();
    await sdk?.stop();
  });

  /** A task left WORKING by the reference executor until someone cancels it. */
  async function slowTask(): Promise<Task> {
    const res = await withTimeout(
      client.call(sendMessage, { message: userMessage('slow please'), configuration: { returnImmediately: true } }),
      CALL_MS,
      'SendMessage (returnImmediately)',
    );
    const task = taskOf(res);
    assert.ok(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(task.status.state), task.status.state);
    return task;
  }

  test('agentCard() reads the SDK server’s card from the well-known path', async () => {
    const card = await withTimeout(client.agentCard(), CALL_MS, 'agentCard');
    assert.equal(card['name'], 'SDK reference agent');
    const ifaces = card['supportedInterfaces'] as Array<{
      url: string;
      protocolBinding: string;
      protocolVersion: string;
    }>;
    assert.deepEqual(
      ifaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
      [[sdk.rpcUrl, 'JSONRPC', '1.0']],
    );
    assert.equal((card['capabilities'] as { streaming?: boolean }).streaming, true);
  });

  test('call(sendMessage) gets the completed task with its artifact', async () => {
    const res = await withTimeout(
      client.call(sendMessage, { message: userMessage('hello sdk') }),
      CALL_MS,
      'SendMessage',
    );
    conforms(sendMessage, res);
    const task = taskOf(res);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(textOf(task.artifacts?.[0]?.parts), 'Echo: hello sdk');
    assert.equal(textOf(task.status.message?.parts), 'done');
    assert.ok(
      task.history?.some((m) => m.role === 'ROLE_USER' && textOf(m.parts) === 'hello sdk'),
      JSON.stringify(task.history),
    );
  });

  test('call(sendMessage) gets a direct Message reply', async () => {
    const res = await withTimeout(
      client.call(sendMessage, { message: userMessage('direct line') }),
      CALL_MS,
      'SendMessage (direct)',
    );
    conforms(sendMessage, res);
    assert.ok('message' in res, JSON.stringify(res));
    assert.equal(res.message.role, 'ROLE_AGENT');
    assert.equal(textOf(res.message.parts), 'Direct: direct line');
  });

  test('stream(sendStreamingMessage): task, WORKING, artifact, COMPLETED — in that order, then the stream ends', async () => {
    const events = await collect(client.stream(sendStreamingMessage, { message: userMessage('stream it') }), {
      timeoutMs: STREAM_MS,
      what: 'SendStreamingMessage',
    });
    for (const { event } of events) conforms(sendStreamingMessage, event);
    const shape = events.map(({ event }) => describeEvent(event));
    assert.deepEqual(shape, ['task', 'status:TASK_STATE_WORKING', 'artifact:result', 'status:TASK_STATE_COMPLETED']);
    const first = events[0]?.event;
    const art = events[2]?.event;
    assert.ok(first && 'task' in first && art && 'artifactUpdate' in art);
    assert.equal(art.artifactUpdate.taskId, first.task.id);
    assert.equal(textOf(art.artifactUpdate.artifact.parts), 'Echo: stream it');
    assert.equal(art.artifactUpdate.lastChunk, true);
  });

  test('call(getTask) reads the task back, honouring historyLength', async () => {
    const sent = taskOf(
      await withTimeout(client.call(sendMessage, { message: userMessage('read me back') }), CALL_MS, 'SendMessage'),
    );
    const task = await withTimeout(client.call(getTask, { id: sent.id }), CALL_MS, 'GetTask');
    conforms(getTask, task);
    assert.equal(task.id, sent.id);
    assert.equal(task.contextId, sent.contextId);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(textOf(task.artifacts?.[0]?.parts), 'Echo: read me back');
    const none = await withTimeout(
      client.call(getTask, { id: sent.id, historyLength: 0 }),
      CALL_MS,
      'GetTask historyLength=0',
    );
    conforms(getTask, none);
    assert.equal(none.history?.length ?? 0, 0);
  });

  test('call(listTasks) lists the tasks of a context', async () => {
    const a = taskOf(
      await withTimeout(client.call(sendMessage, { message: userMessage('list a') }), CALL_MS, 'SendMessage'),
    );
    const b = taskOf(
      await withTimeout(
        client.call(sendMessage, { message: userMessage('list b', { contextId: a.contextId }) }),
        CALL_MS,
        'SendMessage',
      ),
    );
    const page = await withTimeout(client.call(listTasks, { contextId: a.contextId }), CALL_MS, 'ListTasks');
    conforms(listTasks, page);
    assert.deepEqual(page.tasks.map((t) => t.id).sort(), [a.id, b.id].sort());
  });

  test('call(cancelTask) cancels a working task; cancelling a finished one is TaskNotCancelable (-32002)', async () => {
    const task = await slowTask();
    const canceled = await withTimeout(client.call(cancelTask, { id: task.id }), CALL_MS, 'CancelTask');
    conforms(cancelTask, canceled);
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
    const done = taskOf(
      await withTimeout(client.call(sendMessage, { message: userMessage('quick') }), CALL_MS, 'SendMessage'),
    );
    await assert.rejects(
      withTimeout(client.call(cancelTask, { id: done.id }), CALL_MS, 'CancelTask completed'),
      (err: unknown) => {
        assert.ok(err instanceof A2AClientError, String(err));
        assert.equal(err.code, -32002);
        return true;
      },
    );
  });

  test('stream(subscribeToTask) on a working task: the task first, then the cancellation ends the stream', async () => {
    const task = await slowTask();
    let cancel: Promise<unknown> | undefined;
    const events = await collect(client.stream(subscribeToTask, { id: task.id }), {
      timeoutMs: STREAM_MS,
      what: 'SubscribeToTask',
      onEvent: (_ev, all) => {
        if (all.length === 1) cancel = client.call(cancelTask, { id: task.id });
      },
    });
    await withTimeout(cancel ?? Promise.resolve(), CALL_MS, 'CancelTask during the subscription');
    for (const { event } of events) conforms(subscribeToTask, event);
    assert.equal(describeEvent(events[0]?.event), 'task');
    assert.equal(describeEvent(events.at(-1)?.event), 'status:TASK_STATE_CANCELED');
  });

  test('push notification configs: create, get, list and delete through our method rows', async () => {
    const task = await slowTask();
    try {
      const url = 'https://push.example.com/sdk-server/webhook';
      const created = await withTimeout(
        client.call(createPushConfig, { taskId: task.id, id: 'ours-1', url, token: 't0k' }),
        CALL_MS,
        'CreateTaskPushNotificationConfig',
      );
      conforms(createPushConfig, created);
      assert.equal(created.id, 'ours-1');
      assert.equal(created.url, url);
      const got = await withTimeout(
        client.call(getPushConfig, { taskId: task.id, id: 'ours-1' }),
        CALL_MS,
        'GetTaskPushNotificationConfig',
      );
      conforms(getPushConfig, got);
      assert.equal(got.url, url);
      const list = await withTimeout(
        client.call(listPushConfigs, { taskId: task.id }),
        CALL_MS,
        'ListTaskPushNotificationConfigs',
      );
      assert.deepEqual(
        list.configs.map((x) => x.id),
        ['ours-1'],
      );
      const deleted = await withTimeout(
        client.call(deletePushConfig, { taskId: task.id, id: 'ours-1' }),
        CALL_MS,
        'DeleteTaskPushNotificationConfig',
      );
      conforms(deletePushConfig, deleted ?? {});
      const after = await withTimeout(
        client.call(listPushConfigs, { taskId: task.id }),
        CALL_MS,
        'ListTaskPushNotificationConfigs',
      );
      assert.deepEqual(after.configs ?? [], []);
    } finally {
      await withTimeout(client.call(cancelTask, { id: task.id }), CALL_MS, 'CancelTask (clean-up)').catch(
        () => undefined,
      );
    }
  });

  test('an unknown task id is an A2AClientError with code -32001 and reason TASK_NOT_FOUND', async () => {
    await assert.rejects(
      withTimeout(client.call(getTask, { id: 'no-such-task-on-sdk' }), CALL_MS, 'GetTask unknown'),
      (err: unknown) => {
        assert.ok(err instanceof A2AClientError, `expected A2AClientError, got ${String(err)}`);
        assert.equal(err.code, -32001);
        assert.equal(err.reason, 'TASK_NOT_FOUND');
        return true;
      },
    );
  });
});

function describeEvent(ev: StreamResponse | undefined): string {
  if (!ev) return 'none';
  if ('task' in ev) return 'task';
  if ('message' in ev) return 'message';
  if ('statusUpdate' in ev) return `status:${ev.statusUpdate.status.state}`;
  return `artifact:${ev.artifactUpdate.artifact.artifactId}`;
}
