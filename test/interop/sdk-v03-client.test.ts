/**
 * Interop: an A2A v0.3 client (`@a2a-js/sdk` 0.3.13, installed as `a2a-sdk-v03`) against the real
 * CleverAgents server process. The v0.3 client sends no A2A-Version header, uses the v0.3 method
 * names and `kind`-tagged payloads, and reads the endpoint from the card's `url`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type {
  AgentCard,
  DeleteTaskPushNotificationConfigParams,
  GetTaskPushNotificationConfigParams,
  JSONRPCErrorResponse,
  Message,
  MessageSendParams,
  Part,
  Task,
  TaskArtifactUpdateEvent,
  TaskPushNotificationConfig,
  TaskStatusUpdateEvent,
} from 'a2a-sdk-v03';
import { A2AClient } from 'a2a-sdk-v03/client';
import {
  bearerFetch,
  collect,
  mid,
  recordingFetch,
  startCleverAgents,
  withTimeout,
  type RunningServer,
  type WireExchange,
} from './support/cleveragents.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

/** What a v0.3 stream yields (the SDK's A2AStreamEventData). */
type A2AStreamEventData = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

const CALL_MS = 10_000;
const STREAM_MS = 10_000;

interface V03Side {
  client: A2AClient;
  wire: WireExchange[];
  card: AgentCard;
}

async function v03Client(server: RunningServer, auth: 'token' | 'anonymous' = 'token'): Promise<V03Side> {
  const rec = recordingFetch();
  const fetchImpl = auth === 'token' ? bearerFetch(server.token, rec.fetch) : rec.fetch;
  const client = await withTimeout(
    A2AClient.fromCardUrl(`${server.baseUrl}/.well-known/agent-card.json`, { fetchImpl }),
    CALL_MS,
    'A2AClient.fromCardUrl',
  );
  const card = await client.getAgentCard();
  return { client, wire: rec.exchanges, card };
}

function params(
  text: string,
  m: { messageId?: string; taskId?: string; contextId?: string; historyLength?: number } = {},
): MessageSendParams {
  const message: Message = {
    kind: 'message',
    messageId: m.messageId ?? mid(),
    role: 'user',
    parts: [{ kind: 'text', text }],
  };
  if (m.taskId) message.taskId = m.taskId;
  if (m.contextId) message.contextId = m.contextId;
  const p: MessageSendParams = { message };
  if (m.historyLength !== undefined) p.configuration = { historyLength: m.historyLength };
  return p;
}

/** The result of a v0.3 A2AClient call, or a failure naming the JSON-RPC error it got instead. */
function ok<T>(res: { result: T } | JSONRPCErrorResponse): T {
  if ('error' in res)
    assert.fail(`JSON-RPC error ${res.error.code}: ${res.error.message} ${JSON.stringify(res.error.data ?? {})}`);
  return res.result;
}
function asTask(r: Task | Message): Task {
  assert.equal(r.kind, 'task', `expected a task: ${JSON.stringify(r)}`);
  return r;
}
const textOf = (parts: Part[] | undefined): string =>
  (parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
const isStatus = (ev: A2AStreamEventData): ev is TaskStatusUpdateEvent => ev.kind === 'status-update';
const isArtifact = (ev: A2AStreamEventData): ev is TaskArtifactUpdateEvent => ev.kind === 'artifact-update';

describe('@a2a-js/sdk 0.3.13 client → CleverAgents server', { timeout: 60_000 }, () => {
  let echo: RunningServer;
  let conf: RunningServer;
  let e: V03Side;
  let c: V03Side;

  before(async () => {
    [echo, conf] = await Promise.all([
      startCleverAgents({ actor: 'builtin/echo' }),
      startCleverAgents({ actor: 'builtin/conformance' }),
    ]);
    [e, c] = await Promise.all([v03Client(echo), v03Client(conf)]);
  });
  after(async () => {
    await Promise.all([echo?.stop(), conf?.stop()]);
  });

  async function workingTask(): Promise<Task> {
    const task = asTask(
      ok(
        await withTimeout(c.client.sendMessage(params('keep working')), CALL_MS, 'message/send (conformance default)'),
      ),
    );
    assert.equal(task.status.state, 'working');
    return task;
  }

  test('the card a v0.3 client reads declares url, JSON-RPC transport, protocol 0.3 and bearer auth in v0.3 form', () => {
    assert.equal(e.card.url, echo.rpcUrl);
    assert.equal(e.card.preferredTransport, 'JSONRPC');
    assert.match(e.card.protocolVersion, /^0\.3(\.\d+)?$/);
    assert.equal(e.card.capabilities.streaming, true);
    assert.equal(e.card.capabilities.pushNotifications, true);
    assert.deepEqual(e.card.securitySchemes?.['bearer'], {
      type: 'http',
      scheme: 'bearer',
      description: 'An API key of this server (or its server token) as a bearer token.',
    });
    assert.deepEqual(e.card.securitySchemes?.['apiKey'], {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'An API key of this server (or its server token) in the X-API-Key header.',
    });
    assert.deepEqual(e.card.security, [{ apiKey: [] }, { bearer: [] }]);
    const cardReq = e.wire.find((x) => x.url.endsWith('/.well-known/agent-card.json'));
    assert.equal(cardReq?.requestHeaders.get('a2a-version'), null, 'a v0.3 client names no version');
  });

  test('the v0.3 card declares the authenticated extended card the server serves (supportsAuthenticatedExtendedCard)', () => {
    // v0.3 AgentCard.supportsAuthenticatedExtendedCard; v1.0's capabilities.extendedAgentCard means nothing to a v0.3 client.
    assert.equal(e.card.supportsAuthenticatedExtendedCard, true);
  });

  test('message/send (echo) returns the completed task with the echoed artifact', async () => {
    const task = asTask(
      ok(await withTimeout(e.client.sendMessage(params('hello from v0.3')), CALL_MS, 'message/send')),
    );
    assert.ok(task.id && task.contextId);
    assert.equal(task.status.state, 'completed');
    assert.equal(task.artifacts?.length, 1);
    assert.equal(textOf(task.artifacts?.[0]?.parts), `You said: hello from v0.3${HINT}`);
    const mine = task.history?.find((m) => m.role === 'user');
    assert.equal(mine?.kind, 'message');
    assert.equal(textOf(mine?.parts), 'hello from v0.3');
    const ex = e.wire.find((x) => x.method === 'message/send');
    assert.equal(ex?.requestHeaders.get('authorization'), `Bearer ${echo.token}`);
  });

  test('message/stream (echo): task, then status-update and artifact-update events, ending with a final completed status', async () => {
    const events = await collect(e.client.sendMessageStream(params('stream me in v0.3 please')), {
      timeoutMs: STREAM_MS,
      what: 'message/stream',
    });
    const kinds = events.map((ev) => ev.kind);
    assert.equal(kinds[0], 'task', `kinds: ${kinds.join(',')}`);
    const task = events[0] as Task;
    const statuses = events.filter(isStatus);
    assert.equal(statuses[0]?.status.state, 'working');
    assert.equal(statuses.at(-1)?.status.state, 'completed');
    assert.equal(kinds.at(-1), 'status-update', 'the final status is the last event');
    assert.deepEqual(
      statuses.map((s) => s.final),
      statuses.map((_, i) => i === statuses.length - 1),
      'only the last status-update is final',
    );
    const chunks = events.filter(isArtifact);
    assert.ok(chunks.length >= 2, `several chunks (got ${chunks.length})`);
    assert.ok(
      chunks.every(
        (ch) => ch.taskId === task.id && ch.contextId === task.contextId && ch.artifact.artifactId === 'response',
      ),
    );
    assert.equal(chunks.at(-1)?.lastChunk, true);
    assert.ok(chunks.slice(1).every((ch) => ch.append === true));
    assert.equal(chunks.map((ch) => textOf(ch.artifact.parts)).join(''), `You said: stream me in v0.3 please${HINT}`);
  });

  test('tasks/get returns the task, honouring historyLength', async () => {
    const sent = asTask(ok(await withTimeout(e.client.sendMessage(params('get me')), CALL_MS, 'message/send')));
    const got = ok(await withTimeout(e.client.getTask({ id: sent.id }), CALL_MS, 'tasks/get'));
    assert.equal(got.kind, 'task');
    assert.equal(got.id, sent.id);
    assert.equal(got.status.state, 'completed');
    assert.equal(textOf(got.artifacts?.[0]?.parts), `You said: get me${HINT}`);
    const limited = ok(
      await withTimeout(e.client.getTask({ id: sent.id, historyLength: 1 }), CALL_MS, 'tasks/get historyLength=1'),
    );
    assert.ok((limited.history?.length ?? 0) <= 1, `history: ${limited.history?.length}`);
  });

  test('tasks/cancel cancels a working task; canceling again is error -32002', async () => {
    const task = await workingTask();
    const canceled = ok(await withTimeout(c.client.cancelTask({ id: task.id }), CALL_MS, 'tasks/cancel'));
    assert.equal(canceled.kind, 'task');
    assert.equal(canceled.status.state, 'canceled');
    const again = await withTimeout(c.client.cancelTask({ id: task.id }), CALL_MS, 'tasks/cancel again');
    assert.ok('error' in again, `expected an error: ${JSON.stringify(again)}`);
    assert.equal(again.error.code, -32002);
  });

  test('tasks/resubscribe on a working task: the current task first, then updates until the final one', async () => {
    const task = await workingTask();
    let cancel: Promise<unknown> | undefined;
    const events = await collect(c.client.resubscribeTask({ id: task.id }), {
      timeoutMs: STREAM_MS,
      what: 'tasks/resubscribe',
      onEvent: (_ev, all) => {
        if (all.length === 1) cancel = c.client.cancelTask({ id: task.id });
      },
    });
    await withTimeout(cancel ?? Promise.resolve(), CALL_MS, 'tasks/cancel during resubscribe');
    assert.equal(events[0]?.kind, 'task', `first: ${JSON.stringify(events[0])}`);
    assert.equal(events[0].status.state, 'working');
    const last = events.at(-1);
    assert.ok(last && isStatus(last), `last: ${JSON.stringify(last)}`);
    assert.equal(last.status.state, 'canceled');
    assert.equal(last.final, true);
  });

  test('input-required over message/stream: the interrupting status-update is final, and a follow-up completes the task', async () => {
    const first = await collect(c.client.sendMessageStream(params('start', { messageId: mid('tck-input-required') })), {
      timeoutMs: STREAM_MS,
      what: 'message/stream',
    });
    const task = first[0] as Task;
    assert.equal(task.kind, 'task');
    const last = first.at(-1);
    assert.ok(last && isStatus(last));
    assert.equal(last.status.state, 'input-required');
    assert.equal(last.final, true, 'v0.3 marks the interrupting update final');
    assert.equal(last.status.message?.role, 'agent');

    const done = asTask(
      ok(
        await withTimeout(
          c.client.sendMessage(params('more', { taskId: task.id, contextId: task.contextId })),
          CALL_MS,
          'follow-up',
        ),
      ),
    );
    assert.equal(done.id, task.id);
    assert.equal(done.status.state, 'completed');
    assert.equal(textOf(done.artifacts?.[0]?.parts), 'Input received; task completed');
  });

  test('a direct message response is a kind:"message" result', async () => {
    const reply = ok(
      await withTimeout(
        c.client.sendMessage(params('hi', { messageId: mid('tck-message-response') })),
        CALL_MS,
        'message/send',
      ),
    );
    assert.equal(reply.kind, 'message');
    const m = reply;
    assert.equal(m.role, 'agent');
    assert.equal(textOf(m.parts), 'Direct message response');
  });

  test('tasks/pushNotificationConfig set, get, list and delete', async () => {
    const task = await workingTask();
    const url = 'https://push.example.com/v03/webhook';
    const config: TaskPushNotificationConfig = {
      taskId: task.id,
      pushNotificationConfig: {
        id: 'v03-cfg',
        url,
        token: 'verify-me',
        authentication: { schemes: ['Bearer'], credentials: 's3cret' },
      },
    };
    const set = ok(
      await withTimeout(c.client.setTaskPushNotificationConfig(config), CALL_MS, 'tasks/pushNotificationConfig/set'),
    );
    assert.equal(set.taskId, task.id);
    assert.equal(set.pushNotificationConfig.id, 'v03-cfg');
    assert.equal(set.pushNotificationConfig.url, url);

    // v0.3 let a config be set without an id; it is then known by the task's id.
    const plain = ok(
      await withTimeout(
        c.client.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { url: `${url}/default` } }),
        CALL_MS,
        'set without id',
      ),
    );
    assert.equal(plain.pushNotificationConfig.url, `${url}/default`);

    const byId: GetTaskPushNotificationConfigParams = { id: task.id, pushNotificationConfigId: 'v03-cfg' };
    const got = ok(
      await withTimeout(c.client.getTaskPushNotificationConfig(byId), CALL_MS, 'tasks/pushNotificationConfig/get'),
    );
    assert.equal(got.taskId, task.id);
    assert.equal(got.pushNotificationConfig.url, url);
    assert.deepEqual(got.pushNotificationConfig.authentication?.schemes, ['Bearer']);
    assert.equal(got.pushNotificationConfig.authentication?.credentials, undefined, 'credentials are not returned');
    const byTask = ok(
      await withTimeout(c.client.getTaskPushNotificationConfig({ id: task.id }), CALL_MS, 'get by task id only'),
    );
    assert.equal(byTask.pushNotificationConfig.url, `${url}/default`);

    const list = ok(
      await withTimeout(
        c.client.listTaskPushNotificationConfig({ id: task.id }),
        CALL_MS,
        'tasks/pushNotificationConfig/list',
      ),
    );
    assert.ok(Array.isArray(list), `a v0.3 list result is an array: ${JSON.stringify(list)}`);
    assert.deepEqual(list.map((x) => x.pushNotificationConfig.url).sort(), [url, `${url}/default`].sort());
    assert.ok(list.every((x) => x.taskId === task.id));

    const del: DeleteTaskPushNotificationConfigParams = { id: task.id, pushNotificationConfigId: 'v03-cfg' };
    const deleted = await withTimeout(
      c.client.deleteTaskPushNotificationConfig(del),
      CALL_MS,
      'tasks/pushNotificationConfig/delete',
    );
    assert.ok(!('error' in deleted), JSON.stringify(deleted));
    assert.equal(deleted.result, null);
    const after = ok(
      await withTimeout(c.client.listTaskPushNotificationConfig({ id: task.id }), CALL_MS, 'list after delete'),
    );
    assert.deepEqual(
      after.map((x) => x.pushNotificationConfig.url),
      [`${url}/default`],
    );
    const gone = await withTimeout(c.client.getTaskPushNotificationConfig(byId), CALL_MS, 'get deleted');
    assert.ok('error' in gone);
    assert.equal(gone.error.code, -32001);
    ok(
      await withTimeout(
        c.client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: task.id }),
        CALL_MS,
        'delete default',
      ),
    );
  });

  test('tasks/get of an unknown id is error -32001 (TaskNotFoundError)', async () => {
    const res = await withTimeout(e.client.getTask({ id: 'no-such-task-v03' }), CALL_MS, 'tasks/get unknown');
    assert.ok('error' in res, `expected an error: ${JSON.stringify(res)}`);
    assert.equal(res.error.code, -32001);
    assert.equal(res.id, (e.wire.at(-1)?.requestBody as { id: unknown }).id);
    assert.match(res.error.message, /no-such-task-v03 was not found/);
  });

  test('agent/getAuthenticatedExtendedCard answers a v0.3 caller with a v0.3 Agent Card', async () => {
    const res = (await withTimeout(
      c.client.callExtensionMethod('agent/getAuthenticatedExtendedCard', {}),
      CALL_MS,
      'agent/getAuthenticatedExtendedCard',
    )) as { result: AgentCard } | JSONRPCErrorResponse;
    const card = ok(res);
    const problems: string[] = [];
    if (card.url !== conf.rpcUrl) problems.push(`url is ${JSON.stringify(card.url)}`);
    if (typeof card.protocolVersion !== 'string' || !card.protocolVersion.startsWith('0.3'))
      problems.push(`protocolVersion is ${JSON.stringify(card.protocolVersion)}`);
    if (card.preferredTransport !== 'JSONRPC')
      problems.push(`preferredTransport is ${JSON.stringify(card.preferredTransport)}`);
    const scheme = card.securitySchemes?.['bearer'] as { type?: string } | undefined;
    if (scheme?.type !== 'http')
      problems.push(`securitySchemes.bearer is ${JSON.stringify(scheme)} (v0.3 needs {type:"http",scheme:"bearer"})`);
    if (!Array.isArray(card.security)) problems.push(`security is ${JSON.stringify(card.security)}`);
    assert.deepEqual(problems, [], 'the extended card a v0.3 client receives is not a v0.3 AgentCard');
  });

  test('without the token: HTTP 401, and its JSON-RPC code is not an A2A task error code', async () => {
    const anon = await v03Client(conf, 'anonymous');
    const res = await withTimeout(anon.client.getTask({ id: 'whatever' }), CALL_MS, 'tasks/get without token');
    assert.ok('error' in res, JSON.stringify(res));
    const ex = anon.wire.find((x) => x.method === 'tasks/get');
    assert.equal(ex?.status, 401);
    // -32002 is TaskNotCancelableError in v0.3 too; the SDK maps it to TaskNotCancelableJSONRPCError.
    assert.ok(
      !(res.error.code <= -32001 && res.error.code >= -32007),
      `a missing token is reported with error.code ${res.error.code}, an A2A v0.3 task error code`,
    );
  });
});
