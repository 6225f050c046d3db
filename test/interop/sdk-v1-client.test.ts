/**
 * Interop: the official A2A v1.0 SDK client (`@a2a-js/sdk` 1.3, JSON-RPC transport built by its
 * ClientFactory from our Agent Card) against the real CleverAgents server process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  Role,
  SendMessageRequest,
  TaskPushNotificationConfig,
  TaskState,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { A2AError, isJsonRpcError, TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import {
  collect,
  mid,
  recordingFetch,
  sseEvents,
  startCleverAgents,
  withTimeout,
  type RunningServer,
  type WireExchange,
} from './support/cleveragents.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

const CALL_MS = 10_000;
const STREAM_MS = 10_000;

interface SdkSide {
  client: Client;
  wire: WireExchange[];
}

/** The SDK's own way in: ClientFactory → card resolver → JSON-RPC transport, token via its auth fetch wrapper. */
async function sdkClient(server: RunningServer, auth: 'token' | 'anonymous' = 'token'): Promise<SdkSide> {
  const rec = recordingFetch();
  const token = server.token;
  const fetchImpl =
    auth === 'token'
      ? createAuthenticatingFetchWithRetry(rec.fetch, {
          headers: async () => ({ Authorization: `Bearer ${token}` }),
          shouldRetryWithHeaders: async () => undefined,
        })
      : rec.fetch;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: rec.fetch }),
    }),
  );
  const client = await withTimeout(factory.createFromUrl(server.baseUrl), CALL_MS, 'ClientFactory.createFromUrl');
  return { client, wire: rec.exchanges };
}

function request(
  text: string,
  m: { messageId?: string; taskId?: string; contextId?: string; historyLength?: number } = {},
): SendMessageRequest {
  const message: Record<string, unknown> = { messageId: m.messageId ?? mid(), role: 'ROLE_USER', parts: [{ text }] };
  if (m.taskId) message['taskId'] = m.taskId;
  if (m.contextId) message['contextId'] = m.contextId;
  const json: Record<string, unknown> = { message };
  if (m.historyLength !== undefined) json['configuration'] = { historyLength: m.historyLength };
  return SendMessageRequest.fromJSON(json);
}

const textOf = (parts: Part[] | undefined): string =>
  (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const isMessage = (r: Message | Task): r is Message => 'messageId' in r;
function asTask(r: Message | Task): Task {
  assert.ok(!isMessage(r), `expected a Task, got a Message: ${JSON.stringify(r)}`);
  return r;
}
const stateName = (s: TaskState | undefined): string => (s === undefined ? 'undefined' : (TaskState[s] ?? String(s)));
const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const isTerminalEvent = (ev: StreamResponse): boolean =>
  ev.payload?.$case === 'statusUpdate' &&
  TERMINAL.has(ev.payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);

/** A v1.0 ProtoJSON payload has no v0.3 `kind` discriminators anywhere. */
function assertNoKind(value: unknown, path = 'result'): void {
  if (Array.isArray(value)) return value.forEach((v, i) => assertNoKind(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return;
  assert.ok(!('kind' in value), `${path} carries a v0.3 "kind" field in a v1.0 response`);
  for (const [k, v] of Object.entries(value)) if (k !== 'metadata' && k !== 'data') assertNoKind(v, `${path}.${k}`);
}

const lastExchange = (wire: WireExchange[], method: string): WireExchange => {
  const ex = [...wire].reverse().find((e) => e.method === method);
  assert.ok(ex, `no ${method} request went over the wire (saw: ${wire.map((e) => e.method ?? e.url).join(', ')})`);
  return ex;
};

describe('@a2a-js/sdk 1.3 client → CleverAgents server', { timeout: 60_000 }, () => {
  let echo: RunningServer;
  let conf: RunningServer;
  let e: SdkSide;
  let c: SdkSide;

  before(async () => {
    [echo, conf] = await Promise.all([
      startCleverAgents({ actor: 'builtin/echo' }),
      startCleverAgents({ actor: 'builtin/conformance' }),
    ]);
    [e, c] = await Promise.all([sdkClient(echo), sdkClient(conf)]);
  });
  after(async () => {
    await Promise.all([echo?.stop(), conf?.stop()]);
  });

  /** A conformance task in its default behaviour: WORKING until cancelled. */
  async function workingTask(): Promise<Task> {
    const task = asTask(
      await withTimeout(c.client.sendMessage(request('keep working')), CALL_MS, 'SendMessage (conformance default)'),
    );
    assert.equal(stateName(task.status?.state), 'TASK_STATE_WORKING');
    return task;
  }

  test('the factory picks the v1.0 JSON-RPC interface of the card and sends A2A-Version: 1.0 with the token', async () => {
    assert.equal(e.client.protocolVersion, '1.0');
    assert.equal(e.client.transport.protocolName, 'JSONRPC');
    await withTimeout(e.client.getTask(GetTaskRequest.fromJSON({ id: 'warm-up' })), CALL_MS, 'GetTask').catch(
      () => undefined,
    );
    const ex = lastExchange(e.wire, 'GetTask');
    assert.equal(ex.requestHeaders.get('a2a-version'), '1.0');
    assert.equal(ex.requestHeaders.get('authorization'), `Bearer ${echo.token}`);
    assert.equal(new URL(ex.url).pathname, '/a2a');
  });

  test('sendMessage (echo) returns the completed task with the echoed artifact', async () => {
    const result = await withTimeout(e.client.sendMessage(request('hello interop world')), CALL_MS, 'SendMessage');
    const task = asTask(result);
    assert.ok(task.id, 'task id');
    assert.ok(task.contextId, 'context id');
    assert.equal(stateName(task.status?.state), 'TASK_STATE_COMPLETED');
    assert.equal(task.artifacts.length, 1, JSON.stringify(task.artifacts));
    assert.equal(textOf(task.artifacts[0]?.parts), `You said: hello interop world${HINT}`);
    const mine = task.history.find((m) => m.role === Role.ROLE_USER);
    assert.equal(textOf(mine?.parts), 'hello interop world');

    const raw = JSON.parse(await lastExchange(e.wire, 'SendMessage').body) as {
      id: unknown;
      result: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(raw.result), ['task'], 'SendMessageResponse carries exactly the `task` member');
    assertNoKind(raw.result);
  });

  test('sendMessageStream (echo): the task first, then status and artifact updates in order, ending completed', async () => {
    const abort = new AbortController();
    const events = await collect(
      e.client.sendMessageStream(request('stream me some words please'), { signal: abort.signal }),
      {
        timeoutMs: STREAM_MS,
        abort,
        what: 'SendStreamingMessage',
      },
    );
    const kinds = events.map((ev) => ev.payload?.$case);
    assert.equal(kinds[0], 'task', `first event: ${kinds.join(',')}`);
    const task = events[0]?.payload?.$case === 'task' ? events[0].payload.value : undefined;
    assert.ok(task?.id);

    const statuses = events.flatMap((ev) =>
      ev.payload?.$case === 'statusUpdate' ? [stateName(ev.payload.value.status?.state)] : [],
    );
    assert.equal(statuses[0], 'TASK_STATE_WORKING', `statuses: ${statuses.join(',')}`);
    assert.equal(statuses.at(-1), 'TASK_STATE_COMPLETED', `statuses: ${statuses.join(',')}`);
    assert.equal(kinds.at(-1), 'statusUpdate', 'the terminal status update is the last event');

    const chunks = events.flatMap((ev) => (ev.payload?.$case === 'artifactUpdate' ? [ev.payload.value] : []));
    assert.ok(chunks.length >= 2, `echo streams several chunks (got ${chunks.length})`);
    assert.equal(chunks[0]?.append, false);
    assert.ok(
      chunks.slice(1).every((ch) => ch.append),
      'later chunks append',
    );
    assert.equal(chunks.at(-1)?.lastChunk, true);
    assert.ok(chunks.every((ch) => ch.taskId === task.id && ch.artifact?.artifactId === 'response'));
    assert.equal(
      chunks.map((ch) => textOf(ch.artifact?.parts)).join(''),
      `You said: stream me some words please${HINT}`,
    );
    // Artifact updates come between WORKING and COMPLETED.
    const firstArtifact = kinds.indexOf('artifactUpdate');
    const working = events.findIndex(
      (ev) => ev.payload?.$case === 'statusUpdate' && ev.payload.value.status?.state === TaskState.TASK_STATE_WORKING,
    );
    assert.ok(working < firstArtifact && firstArtifact < events.length - 1, `order: ${kinds.join(',')}`);

    const ex = lastExchange(e.wire, 'SendStreamingMessage');
    assert.match(ex.contentType, /^text\/event-stream/);
    const sse = sseEvents(await ex.body);
    assert.equal(sse.length, events.length);
    for (const { data } of sse) {
      const d = data as { jsonrpc: string; id: unknown; result: Record<string, unknown> };
      assert.equal(d.jsonrpc, '2.0');
      assert.equal(d.id, (ex.requestBody as { id: unknown }).id);
      assert.equal(Object.keys(d.result).length, 1, `one StreamResponse member per event: ${JSON.stringify(d.result)}`);
      assertNoKind(d.result);
    }
  });

  test('getTask honours historyLength', async () => {
    const first = asTask(
      await withTimeout(
        c.client.sendMessage(request('first', { messageId: mid('tck-input-required') })),
        CALL_MS,
        'SendMessage',
      ),
    );
    await withTimeout(
      c.client.sendMessage(request('second', { taskId: first.id, contextId: first.contextId })),
      CALL_MS,
      'follow-up',
    );
    const full = await withTimeout(c.client.getTask(GetTaskRequest.fromJSON({ id: first.id })), CALL_MS, 'GetTask');
    assert.ok(full.history.length >= 3, `history: ${full.history.length}`);
    const one = await withTimeout(
      c.client.getTask(GetTaskRequest.fromJSON({ id: first.id, historyLength: 1 })),
      CALL_MS,
      'GetTask historyLength=1',
    );
    assert.equal(one.history.length, 1);
    assert.equal(one.history[0]?.messageId, full.history.at(-1)?.messageId, 'the most recent message is kept');
    const none = await withTimeout(
      c.client.getTask(GetTaskRequest.fromJSON({ id: first.id, historyLength: 0 })),
      CALL_MS,
      'GetTask historyLength=0',
    );
    assert.equal(none.history.length, 0);
    const raw = JSON.parse(await lastExchange(c.wire, 'GetTask').body) as { result: Record<string, unknown> };
    assert.ok(!('history' in raw.result), 'historyLength 0: the history field is omitted (§3.2.4)');
    assert.equal(none.id, first.id);
    assert.equal(stateName(none.status?.state), 'TASK_STATE_COMPLETED');
  });

  test('listTasks lists the caller’s tasks of a context, newest first, without artifacts by default', async () => {
    const a = asTask(await withTimeout(e.client.sendMessage(request('list one')), CALL_MS, 'SendMessage'));
    const b = asTask(
      await withTimeout(e.client.sendMessage(request('list two', { contextId: a.contextId })), CALL_MS, 'SendMessage'),
    );
    const page = await withTimeout(
      e.client.listTasks(ListTasksRequest.fromJSON({ contextId: a.contextId })),
      CALL_MS,
      'ListTasks',
    );
    assert.deepEqual(
      page.tasks.map((t) => t.id),
      [b.id, a.id],
    );
    assert.equal(page.nextPageToken, '');
    assert.equal(page.totalSize, 2);
    const raw = JSON.parse(await lastExchange(e.wire, 'ListTasks').body) as {
      result: { tasks: Array<Record<string, unknown>>; nextPageToken?: unknown };
    };
    assert.equal(raw.result.nextPageToken, '', 'nextPageToken is present (empty on the last page)');
    assert.ok(
      raw.result.tasks.every((t) => !('artifacts' in t)),
      'artifacts are omitted unless includeArtifacts',
    );

    const withArtifacts = await withTimeout(
      e.client.listTasks(ListTasksRequest.fromJSON({ contextId: a.contextId, includeArtifacts: true, pageSize: 1 })),
      CALL_MS,
      'ListTasks page 1',
    );
    assert.equal(withArtifacts.tasks.length, 1);
    assert.equal(textOf(withArtifacts.tasks[0]?.artifacts[0]?.parts), 'You said: list two');
    assert.notEqual(withArtifacts.nextPageToken, '');
    const next = await withTimeout(
      e.client.listTasks(
        ListTasksRequest.fromJSON({ contextId: a.contextId, pageSize: 1, pageToken: withArtifacts.nextPageToken }),
      ),
      CALL_MS,
      'ListTasks page 2',
    );
    assert.deepEqual(
      next.tasks.map((t) => t.id),
      [a.id],
    );
  });

  test('cancelTask cancels a working conformance task; a second cancel is TaskNotCancelableError', async () => {
    const task = await workingTask();
    const canceled = await withTimeout(
      c.client.cancelTask({ tenant: '', id: task.id, metadata: undefined }),
      CALL_MS,
      'CancelTask',
    );
    assert.equal(canceled.id, task.id);
    assert.equal(stateName(canceled.status?.state), 'TASK_STATE_CANCELED');
    const again = await withTimeout(c.client.getTask(GetTaskRequest.fromJSON({ id: task.id })), CALL_MS, 'GetTask');
    assert.equal(stateName(again.status?.state), 'TASK_STATE_CANCELED');
    await assert.rejects(
      withTimeout(c.client.cancelTask({ tenant: '', id: task.id, metadata: undefined }), CALL_MS, 'CancelTask again'),
      (err: unknown) => {
        assert.ok(err instanceof TaskNotCancelableError, `expected TaskNotCancelableError, got ${String(err)}`);
        return true;
      },
    );
  });

  test('resubscribeTask (SubscribeToTask) on a working task: the task first, then updates until it ends', async () => {
    const task = await workingTask();
    const abort = new AbortController();
    let cancel: Promise<unknown> | undefined;
    const events = await collect(c.client.resubscribeTask({ tenant: '', id: task.id }, { signal: abort.signal }), {
      timeoutMs: STREAM_MS,
      abort,
      what: 'SubscribeToTask',
      onEvent: (_ev, all) => {
        if (all.length === 1) cancel = c.client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      },
    });
    await withTimeout(cancel ?? Promise.resolve(), CALL_MS, 'CancelTask during the subscription');
    const first = events[0]?.payload;
    assert.equal(first?.$case, 'task', `first event: ${JSON.stringify(events[0])}`);
    assert.equal(first.value.id, task.id);
    assert.equal(stateName(first.value.status?.state), 'TASK_STATE_WORKING');
    const last = events.at(-1);
    assert.ok(
      last && isTerminalEvent(last),
      `the stream ends with the terminal update: ${events.map((ev) => ev.payload?.$case).join(',')}`,
    );
    assert.equal(
      last.payload?.$case === 'statusUpdate' ? stateName(last.payload.value.status?.state) : '',
      'TASK_STATE_CANCELED',
    );
  });

  test('resubscribeTask on a finished task fails with UnsupportedOperationError; on an unknown task with TaskNotFoundError', async () => {
    const done = asTask(await withTimeout(e.client.sendMessage(request('finish first')), CALL_MS, 'SendMessage'));
    /** The SDK raises the typed error itself, or (for an error sent as an SSE event) as the cause. */
    const semantic = (err: unknown): unknown =>
      err instanceof A2AError ? err : err instanceof Error ? err.cause : undefined;
    const abort = new AbortController();
    await assert.rejects(
      collect(e.client.resubscribeTask({ tenant: '', id: done.id }, { signal: abort.signal }), {
        timeoutMs: STREAM_MS,
        abort,
        what: 'SubscribeToTask (completed)',
      }),
      (err: unknown) => {
        const s = semantic(err);
        assert.ok(
          s instanceof A2AError && s.name === 'UnsupportedOperationError',
          `expected UnsupportedOperationError, got ${String(err)}`,
        );
        return true;
      },
    );
    const abort2 = new AbortController();
    await assert.rejects(
      collect(e.client.resubscribeTask({ tenant: '', id: 'no-such-task-1111' }, { signal: abort2.signal }), {
        timeoutMs: STREAM_MS,
        abort: abort2,
        what: 'SubscribeToTask (unknown)',
      }),
      (err: unknown) => {
        assert.ok(semantic(err) instanceof TaskNotFoundError, `expected TaskNotFoundError, got ${String(err)}`);
        return true;
      },
    );
  });

  test('input-required: a follow-up message on the same task completes it', async () => {
    const t1 = asTask(
      await withTimeout(
        c.client.sendMessage(request('start', { messageId: mid('tck-input-required') })),
        CALL_MS,
        'SendMessage',
      ),
    );
    assert.equal(stateName(t1.status?.state), 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(textOf(t1.status?.message?.parts), 'Please provide additional input');
    assert.equal(t1.status?.message?.role, Role.ROLE_AGENT);

    const t2 = asTask(
      await withTimeout(
        c.client.sendMessage(request('here you go', { taskId: t1.id, contextId: t1.contextId })),
        CALL_MS,
        'follow-up',
      ),
    );
    assert.equal(t2.id, t1.id);
    assert.equal(t2.contextId, t1.contextId);
    assert.equal(stateName(t2.status?.state), 'TASK_STATE_COMPLETED');
    assert.equal(textOf(t2.artifacts[0]?.parts), 'Input received; task completed');
    assert.ok(
      t2.history.some((m) => textOf(m.parts) === 'here you go'),
      'the follow-up is in the history',
    );

    // A terminal task refuses further messages.
    await assert.rejects(
      withTimeout(c.client.sendMessage(request('too late', { taskId: t1.id })), CALL_MS, 'send to completed task'),
      (err: unknown) => {
        assert.ok(
          err instanceof A2AError && err.name === 'UnsupportedOperationError',
          `expected UnsupportedOperationError, got ${String(err)}`,
        );
        return true;
      },
    );
  });

  test('input-required over streaming: the stream closes at the interruption and resumes on the follow-up', async () => {
    const abort = new AbortController();
    const first = await collect(
      c.client.sendMessageStream(request('start', { messageId: mid('tck-input-required') }), { signal: abort.signal }),
      {
        timeoutMs: STREAM_MS,
        abort,
        what: 'SendStreamingMessage (input-required)',
      },
    );
    const task = first[0]?.payload?.$case === 'task' ? first[0].payload.value : undefined;
    assert.ok(task, `first event is the task: ${JSON.stringify(first[0])}`);
    const lastState = first.at(-1)?.payload?.$case === 'statusUpdate' ? first.at(-1)?.payload?.value : undefined;
    assert.equal(
      stateName((lastState as { status?: { state: TaskState } } | undefined)?.status?.state),
      'TASK_STATE_INPUT_REQUIRED',
    );

    const abort2 = new AbortController();
    const second = await collect(
      c.client.sendMessageStream(request('more', { taskId: task.id, contextId: task.contextId }), {
        signal: abort2.signal,
      }),
      {
        timeoutMs: STREAM_MS,
        abort: abort2,
        what: 'SendStreamingMessage (follow-up)',
      },
    );
    assert.equal(second[0]?.payload?.$case, 'task');
    assert.ok(
      isTerminalEvent(second.at(-1) as StreamResponse),
      `ends terminal: ${second.map((ev) => ev.payload?.$case).join(',')}`,
    );
  });

  test('a direct message response comes back as a Message (unary and streaming)', async () => {
    const reply = await withTimeout(
      c.client.sendMessage(request('hi', { messageId: mid('tck-message-response') })),
      CALL_MS,
      'SendMessage',
    );
    assert.ok(isMessage(reply), `expected a Message: ${JSON.stringify(reply)}`);
    assert.equal(reply.role, Role.ROLE_AGENT);
    assert.equal(textOf(reply.parts), 'Direct message response');
    assert.ok(reply.contextId, 'an agent message carries its contextId');
    const raw = JSON.parse(await lastExchange(c.wire, 'SendMessage').body) as { result: Record<string, unknown> };
    assert.deepEqual(Object.keys(raw.result), ['message']);

    const abort = new AbortController();
    const events = await collect(
      c.client.sendMessageStream(request('hi', { messageId: mid('tck-message-response') }), { signal: abort.signal }),
      {
        timeoutMs: STREAM_MS,
        abort,
        what: 'SendStreamingMessage (message)',
      },
    );
    assert.deepEqual(
      events.map((ev) => ev.payload?.$case),
      ['message'],
      'a message-only stream has exactly one Message, then closes',
    );
  });

  test('push notification configs: create, get, list and delete', async () => {
    const task = await workingTask();
    const url = 'https://push.example.com/a2a/webhook';
    const created = await withTimeout(
      c.client.createTaskPushNotificationConfig(
        TaskPushNotificationConfig.fromJSON({
          taskId: task.id,
          id: 'interop-cfg',
          url,
          token: 'verify-me',
          authentication: { scheme: 'Bearer', credentials: 's3cret' },
        }),
      ),
      CALL_MS,
      'CreateTaskPushNotificationConfig',
    );
    assert.equal(created.id, 'interop-cfg');
    assert.equal(created.taskId, task.id);
    assert.equal(created.url, url);

    const generated = await withTimeout(
      c.client.createTaskPushNotificationConfig(
        TaskPushNotificationConfig.fromJSON({ taskId: task.id, url: `${url}/2` }),
      ),
      CALL_MS,
      'CreateTaskPushNotificationConfig (no id)',
    );
    assert.ok(generated.id && generated.id !== 'interop-cfg', `the server assigns an id: ${JSON.stringify(generated)}`);

    const got = await withTimeout(
      c.client.getTaskPushNotificationConfig(
        GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'interop-cfg' }),
      ),
      CALL_MS,
      'GetTaskPushNotificationConfig',
    );
    assert.equal(got.id, 'interop-cfg');
    assert.equal(got.taskId, task.id);
    assert.equal(got.url, url);
    assert.equal(got.authentication?.scheme, 'Bearer');
    assert.equal(got.authentication?.credentials ?? '', '', 'credentials are not returned');

    const list = await withTimeout(
      c.client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id })),
      CALL_MS,
      'ListTaskPushNotificationConfigs',
    );
    assert.deepEqual(list.configs.map((x) => x.id).sort(), [generated.id, 'interop-cfg'].sort());
    assert.ok(list.configs.every((x) => x.taskId === task.id));

    await withTimeout(
      c.client.deleteTaskPushNotificationConfig(
        DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'interop-cfg' }),
      ),
      CALL_MS,
      'DeleteTaskPushNotificationConfig',
    );
    // Idempotent (§3.1.10).
    await withTimeout(
      c.client.deleteTaskPushNotificationConfig(
        DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'interop-cfg' }),
      ),
      CALL_MS,
      'DeleteTaskPushNotificationConfig again',
    );
    const after = await withTimeout(
      c.client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id })),
      CALL_MS,
      'ListTaskPushNotificationConfigs',
    );
    assert.deepEqual(
      after.configs.map((x) => x.id),
      [generated.id],
    );
    await assert.rejects(
      withTimeout(
        c.client.getTaskPushNotificationConfig(
          GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'interop-cfg' }),
        ),
        CALL_MS,
        'Get deleted',
      ),
      (err: unknown) => err instanceof TaskNotFoundError,
    );
    await withTimeout(
      c.client.deleteTaskPushNotificationConfig(
        DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: generated.id }),
      ),
      CALL_MS,
      'DeleteTaskPushNotificationConfig',
    );
  });

  test('getAgentCard fetches the authenticated extended card (GetExtendedAgentCard)', async () => {
    const side = await sdkClient(echo);
    const card = await withTimeout(side.client.getAgentCard(), CALL_MS, 'getAgentCard');
    const ex = lastExchange(side.wire, 'GetExtendedAgentCard');
    assert.equal(ex.status, 200);
    assert.equal(card.name, 'CleverAgents');
    assert.ok(card.supportedInterfaces.some((i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === '1.0'));
    const ext = card.capabilities?.extensions.find((x) => x.uri === 'urn:cleveragents:extensions:v1');
    assert.ok(
      ext?.params?.['principal'],
      `the extended card names the caller: ${JSON.stringify(ext?.params).slice(0, 300)}`,
    );
    assert.equal(card.securitySchemes['bearer']?.scheme?.$case, 'httpAuthSecurityScheme');
  });

  test('getTask of an unknown id raises the SDK’s TaskNotFoundError', async () => {
    await assert.rejects(
      withTimeout(e.client.getTask(GetTaskRequest.fromJSON({ id: 'no-such-task-0000' })), CALL_MS, 'GetTask unknown'),
      (err: unknown) => {
        assert.ok(err instanceof TaskNotFoundError, `expected TaskNotFoundError, got ${String(err)}`);
        assert.ok(isJsonRpcError(err));
        assert.equal(err.envelopeCode, -32001);
        const data = err.data as unknown;
        assert.ok(Array.isArray(data), 'v1.0 error.data is an array of typed details (§9.5)');
        const info = data.find(
          (d: { '@type'?: string }) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo',
        ) as { reason?: string; domain?: string } | undefined;
        assert.equal(info?.reason, 'TASK_NOT_FOUND');
        assert.equal(info?.domain, 'a2a-protocol.org');
        return true;
      },
    );
  });

  test('without the token the server refuses with HTTP 401, and the SDK does not read it as an A2A task error', async () => {
    const anon = await sdkClient(conf, 'anonymous');
    const err = await withTimeout(
      anon.client.getTask(GetTaskRequest.fromJSON({ id: 'whatever' })).then(
        () => undefined,
        (x: unknown) => x,
      ),
      CALL_MS,
      'GetTask without token',
    );
    assert.ok(err, 'the call must fail');
    const ex = lastExchange(anon.wire, 'GetTask');
    assert.equal(ex.status, 401);
    assert.match(ex.contentType, /json/);
    // §3.3.2: authentication failures are a "JSON-RPC custom error"; codes -32001…-32009 are the
    // A2A errors of §5.4 (-32002 = TaskNotCancelableError), so reusing one misleads every client.
    const body = JSON.parse(await ex.body) as { error: { code: number; data?: unknown } };
    const problems: string[] = [];
    // §3.3.2: authentication failures are a "JSON-RPC custom error"; -32001…-32009 are the A2A
    // errors of §5.4 (-32002 = TaskNotCancelableError), so reusing one misleads every client.
    if (body.error.code <= -32001 && body.error.code >= -32009) {
      problems.push(
        `error.code ${body.error.code} is an A2A error code of §5.4; the SDK raises ${(err as Error).name} for a missing token`,
      );
    }
    // §9.5: error.data is an array of objects with an @type (the request said A2A-Version: 1.0).
    if (!Array.isArray(body.error.data))
      problems.push(`error.data is ${JSON.stringify(body.error.data)}, not an array of typed details`);
    assert.deepEqual(problems, []);
  });

  test('the Agent Card advertises the port the server listens on (started with --port 0)', async () => {
    const v1 = (await (
      await fetch(`${echo.baseUrl}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()) as {
      supportedInterfaces: Array<{ url: string; protocolVersion: string }>;
    };
    assert.deepEqual(
      v1.supportedInterfaces.map((i) => [i.url, i.protocolVersion]),
      [
        [echo.rpcUrl, '1.0'],
        [echo.rpcUrl, '0.3'],
      ],
    );
    const v03 = (await (await fetch(`${echo.baseUrl}/.well-known/agent-card.json`)).json()) as { url: string };
    assert.equal(v03.url, echo.rpcUrl, `v0.3 card url (listening on ${echo.port})`);
  });
});
