/** The A2A spine's contract cases: messaging, tasks, push configs, sessions, health, versions. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, it } from 'node:test';
import {
  A2AClient,
  A2AClientError,
  cancelTask,
  createPushConfig,
  deletePushConfig,
  diagnosticsRun,
  getExtendedAgentCard,
  getPushConfig,
  getTask,
  healthCheck,
  listPushConfigs,
  listTasks,
  sendMessage,
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  sessionFork,
  sessionResume,
  sessionList,
  sessionShow,
  sessionUndo,
  sessionUpdate,
  sessionDiff,
  sessionContext,
  subscribeToTask,
  type StreamResponse,
  type Task,
} from '../../src/protocol/client/index.ts';
import { eventually, type Harness } from '../support/harness.ts';
import type { SuiteContext } from './suite-context.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: (extra['messageId'] as string | undefined) ?? randomUUID(),
  role: 'ROLE_USER' as const,
  parts: [{ text }],
  ...extra,
});

export async function rpcError(p: Promise<unknown>, code: number, type: string): Promise<A2AClientError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof A2AClientError, `expected an A2AClientError, got ${String(err)}`);
    assert.equal(err.code, code, `code (${err.message})`);
    assert.equal(err.type, type, `type (${err.message})`);
    assert.ok(err.correlationId, 'a correlation id');
    return err;
  }
  assert.fail(`expected error ${code} ${type}`);
}

export async function collect(
  it: AsyncIterable<{ seq: number; event: StreamResponse }>,
): Promise<Array<{ seq: number; event: StreamResponse }>> {
  const out = [];
  for await (const e of it) out.push(e);
  return out;
}

export const kindOf = (e: StreamResponse): string => Object.keys(e)[0] ?? '?';
export const taskOf = (r: { task: Task } | { message: unknown }): Task => {
  assert.ok('task' in r, 'a task');
  return r.task;
};

/** Registers the cases; the runner starts the harness and compares transports. */
export function a2aSuite(ctx: SuiteContext): void {
  let h: Harness;
  let client: A2AClient;
  let conformance: string;
  const record = ctx.record;
  before(async () => {
    h = ctx.harness();
    client = h.client;
    conformance = (await client.call(sessionCreate, { actor: 'builtin/conformance', title: 'tck' })).id;
  });

  it('answers SendMessage with a completed task carrying the echo artifact', async () => {
    const r = taskOf(await client.call(sendMessage, { message: userMessage('hello over the wire') }));
    assert.equal(r.status.state, 'TASK_STATE_COMPLETED');
    assert.ok(r.contextId, 'a context id was assigned');
    const text = r.artifacts?.[0]?.parts.map((p) => p.text).join('');
    assert.equal(text, `You said: hello over the wire${HINT}`);
    assert.equal(r.history?.[0]?.parts[0]?.text, 'hello over the wire');
    record('send', r);
  });

  it('honours historyLength 0 by omitting history', async () => {
    const r = taskOf(
      await client.call(sendMessage, {
        message: userMessage('no history please'),
        configuration: { historyLength: 0 },
      }),
    );
    assert.equal(r.history, undefined);
  });

  it('refuses a send whose acceptedOutputModes leave out text/plain, and stores nothing', async () => {
    const contextId = `modes-${randomUUID()}`;
    const message = userMessage('answer in pictures', { contextId });
    const err = await rpcError(
      client.call(sendMessage, { message, configuration: { acceptedOutputModes: ['image/png', 'application/json'] } }),
      -32005,
      'ContentTypeNotSupportedError',
    );
    assert.match(err.message, /answers in text\/plain, which acceptedOutputModes \(image\/png, application\/json\)/);
    await rpcError(client.call(sessionShow, { sessionId: contextId }), -32001, 'ResourceNotFoundError');
    // The same message (its messageId unused) goes through with modes that include text.
    const r = taskOf(
      await client.call(sendMessage, { message, configuration: { acceptedOutputModes: ['text/*; charset=utf-8'] } }),
    );
    assert.equal(r.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(r.contextId, contextId);
  });

  it('returns at once with returnImmediately and the task completes in the background', async () => {
    const r = taskOf(
      await client.call(sendMessage, { message: userMessage('later'), configuration: { returnImmediately: true } }),
    );
    assert.ok(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'].includes(r.status.state));
    await eventually(
      async () =>
        (await client.call(getTask, { id: r.id })).status.state === 'TASK_STATE_COMPLETED' ? true : undefined,
      5000,
      'the task to complete',
    );
  });

  it('streams the task first, then status and artifact updates in causal order', async () => {
    const events = await collect(
      client.stream(sendStreamingMessage, { message: userMessage('stream this text please') }),
    );
    const kinds = events.map((e) => kindOf(e.event));
    assert.equal(kinds[0], 'task');
    assert.equal(kinds.at(-1), 'statusUpdate');
    const last = events.at(-1)?.event as { statusUpdate: { status: { state: string } } };
    assert.equal(last.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    const seqs = events.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'sequence numbers increase',
    );
    const chunks = events.flatMap((e) => ('artifactUpdate' in e.event ? [e.event.artifactUpdate] : []));
    assert.ok(chunks.length >= 2, 'several chunks');
    assert.equal(chunks[0]?.append, false);
    assert.ok(chunks.slice(1).every((c) => c.append === true));
    assert.equal(chunks.at(-1)?.lastChunk, true);
    assert.equal(chunks.map((c) => c.artifact.parts[0]?.text).join(''), `You said: stream this text please${HINT}`);
    record(
      'stream',
      events.map((e) => e.event),
    );
  });

  it('keeps a conversation in one context and lists its turns in the session', async () => {
    const s = await client.call(sessionCreate, { title: 'two turns' });
    const a = taskOf(await client.call(sendMessage, { message: userMessage('first', { contextId: s.id }) }));
    const b = taskOf(await client.call(sendMessage, { message: userMessage('second', { contextId: s.id }) }));
    assert.equal(a.contextId, s.id);
    assert.equal(b.contextId, s.id);
    assert.notEqual(a.id, b.id);
    const shown = await client.call(sessionShow, { sessionId: s.id });
    assert.equal(shown.session.taskCount, 2);
    assert.deepEqual(
      shown.tasks.map((t) => t.id),
      [a.id, b.id],
    );
    record('session-show', shown);
  });

  it('creates the session on first use of an unknown contextId', async () => {
    const ctx = `ctx-${randomUUID()}`;
    const r = taskOf(await client.call(sendMessage, { message: userMessage('hi', { contextId: ctx }) }));
    assert.equal(r.contextId, ctx);
    const shown = await client.call(sessionShow, { sessionId: ctx });
    assert.equal(shown.session.actor, 'builtin/echo');
  });

  it('reports TaskNotFound (-32001) for an unknown task', async () => {
    const err = await rpcError(client.call(getTask, { id: 'no-such-task' }), -32001, 'TaskNotFoundError');
    record('get-unknown', { code: err.code, message: err.message, type: err.type });
  });

  it('rejects invalid params with -32602 naming the field', async () => {
    const e1 = await rpcError(client.call(getTask, { id: 'x', historyLength: -1 }), -32602, 'ValidationError');
    assert.equal(e1.fieldViolations[0]?.field, 'historyLength');
    const e2 = await rpcError(
      client.call(sendMessage, { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } }),
      -32602,
      'ValidationError',
    );
    assert.equal(e2.fieldViolations[0]?.field, 'message.parts');
    const e3 = await rpcError(
      client.call(sendMessage, {
        message: { messageId: 'm', role: 'ROLE_SYSTEM' as 'ROLE_USER', parts: [{ text: 'x' }] },
      }),
      -32602,
      'ValidationError',
    );
    assert.equal(e3.fieldViolations[0]?.field, 'message.role');
    await rpcError(
      client.call(sendMessage, { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'a', data: 1 }] } }),
      -32602,
      'ValidationError',
    );
    await rpcError(
      client.call(sendMessage, { message: { messageId: '', role: 'ROLE_USER', parts: [{ text: 'a' }] } }),
      -32602,
      'ValidationError',
    );
    await rpcError(client.raw('GetTask', {}), -32602, 'ValidationError');
    await rpcError(client.raw('GetTask', { id: 42 }), -32602, 'ValidationError');
    await rpcError(client.raw('SendMessage', [1, 2]), -32602, 'ValidationError');
    record('invalid-params', { e1: e1.message, e2: e2.message, e3: e3.message });
  });

  it('lists tasks newest first with cursor paging and filters', async () => {
    const s = await client.call(sessionCreate, {});
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three'])
      ids.push(taskOf(await client.call(sendMessage, { message: userMessage(text, { contextId: s.id }) })).id);
    const p1 = await client.call(listTasks, { contextId: s.id, pageSize: 2 });
    assert.equal(p1.pageSize, 2);
    assert.equal(p1.totalSize, 3);
    assert.notEqual(p1.nextPageToken, '');
    assert.deepEqual(
      p1.tasks.map((t) => t.id),
      [ids[2], ids[1]],
    );
    assert.ok(
      p1.tasks.every((t) => !('artifacts' in t)),
      'artifacts omitted by default',
    );
    const p2 = await client.call(listTasks, { contextId: s.id, pageSize: 2, pageToken: p1.nextPageToken });
    assert.deepEqual(
      p2.tasks.map((t) => t.id),
      [ids[0]],
    );
    assert.equal(p2.nextPageToken, '');
    assert.equal(p2.pageSize, 1);
    const withArtifacts = await client.call(listTasks, { contextId: s.id, includeArtifacts: true, historyLength: 0 });
    assert.equal(withArtifacts.tasks.length, 3);
    assert.ok(withArtifacts.tasks.every((t) => Array.isArray(t.artifacts) && t.history === undefined));
    const completed = await client.call(listTasks, { contextId: s.id, status: 'TASK_STATE_CANCELED' });
    assert.equal(completed.totalSize, 0);
    const future = await client.call(listTasks, { contextId: s.id, statusTimestampAfter: '2999-01-01T00:00:00.000Z' });
    assert.equal(future.tasks.length, 0);
    record('list', { p1: { ...p1, nextPageToken: '<token>' }, p2 });
    await rpcError(client.call(listTasks, { pageSize: 0 }), -32602, 'ValidationError');
    await rpcError(client.call(listTasks, { pageSize: 101 }), -32602, 'ValidationError');
    await rpcError(client.call(listTasks, { pageToken: 'not-a-token' }), -32602, 'ValidationError');
    await rpcError(client.call(listTasks, { statusTimestampAfter: 'yesterday' }), -32602, 'ValidationError');
    await rpcError(client.raw('ListTasks', { status: 'TASK_STATE_RUNNING' }), -32602, 'ValidationError');
  });

  it('cancels a working task, and refuses to cancel it twice', async () => {
    const t = taskOf(
      await client.call(sendMessage, { message: userMessage('stay working', { contextId: conformance }) }),
    );
    assert.equal(t.status.state, 'TASK_STATE_WORKING');
    const c = await client.call(cancelTask, { id: t.id });
    assert.equal(c.status.state, 'TASK_STATE_CANCELED');
    assert.equal((await client.call(getTask, { id: t.id })).status.state, 'TASK_STATE_CANCELED');
    await rpcError(client.call(cancelTask, { id: t.id }), -32002, 'TaskNotCancelableError');
    await rpcError(
      client.call(sendMessage, { message: userMessage('more', { taskId: t.id }) }),
      -32004,
      'UnsupportedOperationError',
    );
    record('cancel', c);
  });

  it('subscribes to a running task: the task first, then its events until it ends', async () => {
    const t = taskOf(await client.call(sendMessage, { message: userMessage('watch me', { contextId: conformance }) }));
    const seen: StreamResponse[] = [];
    const done = (async () => {
      for await (const { event } of client.stream(subscribeToTask, { id: t.id })) {
        seen.push(event);
        if (seen.length === 1) await client.call(cancelTask, { id: t.id });
      }
    })();
    await done;
    assert.equal(kindOf(seen[0] as StreamResponse), 'task');
    const last = seen.at(-1) as { statusUpdate: { status: { state: string } } };
    assert.equal(last.statusUpdate.status.state, 'TASK_STATE_CANCELED');
    await rpcError(collect(client.stream(subscribeToTask, { id: t.id })), -32004, 'UnsupportedOperationError');
    await rpcError(collect(client.stream(subscribeToTask, { id: 'missing' })), -32001, 'TaskNotFoundError');
    record('subscribe', seen);
  });

  it('runs the multi-turn input-required flow', async () => {
    const t = taskOf(
      await client.call(sendMessage, {
        message: userMessage('need input', { contextId: conformance, messageId: `tck-input-required-${randomUUID()}` }),
      }),
    );
    assert.equal(t.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.ok(t.status.message?.parts[0]?.text);
    const done = taskOf(await client.call(sendMessage, { message: userMessage('here you go', { taskId: t.id }) }));
    assert.equal(done.id, t.id);
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
    assert.ok((done.history ?? []).some((m) => m.parts[0]?.text === 'here you go'));
    // Read back from storage (sent as the stored text): the same task, its fields in the same order.
    const stored = await client.call(getTask, { id: t.id });
    assert.deepEqual(stored, done);
    assert.deepEqual(Object.keys(stored), Object.keys(done));
    await rpcError(
      client.call(sendMessage, { message: userMessage('x', { taskId: t.id, contextId: 'other-context' }) }),
      -32602,
      'ValidationError',
    );
    record('input-required', done);
  });

  it('follows the TCK behaviours selected by messageId', async () => {
    const send = (prefix: string) =>
      client.call(sendMessage, {
        message: userMessage('tck', { contextId: conformance, messageId: `${prefix}-${randomUUID()}` }),
      });
    const direct = await send('tck-message-response');
    assert.ok('message' in direct);
    assert.equal(direct.message.role, 'ROLE_AGENT');
    const states: Record<string, string> = {};
    for (const p of ['tck-complete-task', 'tck-reject-task', 'tck-task-failure', 'tck-auth-required'])
      states[p] = taskOf(await send(p)).status.state;
    assert.deepEqual(states, {
      'tck-complete-task': 'TASK_STATE_COMPLETED',
      'tck-reject-task': 'TASK_STATE_REJECTED',
      'tck-task-failure': 'TASK_STATE_FAILED',
      'tck-auth-required': 'TASK_STATE_AUTH_REQUIRED',
    });
    record('tck', states);
  });

  it('stores, lists and deletes push notification configs', async () => {
    const t = taskOf(await client.call(sendMessage, { message: userMessage('push') }));
    const created = await client.call(createPushConfig, {
      taskId: t.id,
      url: 'https://hooks.example.com/a2a',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'secret' },
    });
    assert.ok(created.id);
    assert.equal(created.taskId, t.id);
    const got = await client.call(getPushConfig, { taskId: t.id, id: created.id ?? '' });
    assert.equal(got.url, 'https://hooks.example.com/a2a');
    assert.equal(got.authentication?.credentials, undefined, 'credentials are never returned');
    const named = await client.call(createPushConfig, {
      taskId: t.id,
      id: 'second',
      url: 'https://hooks.example.com/b',
    });
    assert.equal(named.id, 'second');
    const list = await client.call(listPushConfigs, { taskId: t.id });
    assert.deepEqual(
      list.configs.map((x) => x.id),
      [created.id, 'second'],
      'ordered by id',
    );
    assert.equal(list.nextPageToken, '');
    const first = await client.call(listPushConfigs, { taskId: t.id, pageSize: 1 });
    assert.deepEqual(
      first.configs.map((x) => x.id),
      [created.id],
    );
    assert.notEqual(first.nextPageToken, '');
    const rest = await client.call(listPushConfigs, { taskId: t.id, pageSize: 1, pageToken: first.nextPageToken });
    assert.deepEqual([rest.configs.map((x) => x.id), rest.nextPageToken], [['second'], '']);
    await rpcError(client.call(listPushConfigs, { taskId: t.id, pageToken: 'not-a-token' }), -32602, 'ValidationError');
    assert.deepEqual(await client.call(deletePushConfig, { taskId: t.id, id: 'second' }), {});
    assert.deepEqual(await client.call(deletePushConfig, { taskId: t.id, id: 'second' }), {}, 'delete is idempotent');
    await rpcError(client.call(getPushConfig, { taskId: t.id, id: 'second' }), -32001, 'TaskNotFoundError');
    await rpcError(
      client.call(createPushConfig, { taskId: 'missing', url: 'https://hooks.example.com/x' }),
      -32001,
      'TaskNotFoundError',
    );
    await rpcError(client.call(createPushConfig, { taskId: t.id, url: 'not a url' }), -32602, 'ValidationError');
    await rpcError(
      client.call(createPushConfig, { taskId: t.id, url: 'ftp://example.com/x' }),
      -32602,
      'ValidationError',
    );
    record('push', { created, got, list: list.configs.length });
  });

  it('returns the extended agent card with method schemas', async () => {
    const card = await client.call(getExtendedAgentCard, {});
    const ext = (
      card.capabilities as {
        extensions: Array<{ uri: string; params: { methodSchemas: Record<string, unknown>; methods: string[] } }>;
      }
    ).extensions[0];
    assert.equal(ext?.uri, 'urn:cleveragents:extensions:v1');
    assert.ok(ext?.params.methodSchemas['SendMessage']);
    assert.ok(ext?.params.methods.includes('_cleveragents/session/create'));
    const pub = await client.agentCard();
    assert.equal(pub['name'], 'CleverAgents');
  });

  it('reports health and diagnostics', async () => {
    const health = await client.call(healthCheck, {});
    assert.equal(health.status, 'ok');
    assert.equal(health.storage, 'ok');
    const diag = await client.call(diagnosticsRun, {});
    const categories = new Set(diag.checks.map((c) => c.category));
    assert.deepEqual([...categories].sort(), ['configuration', 'disk', 'storage', 'versions']);
    assert.ok(diag.checks.every((c) => ['ok', 'warn', 'fail'].includes(c.status) && c.detail.length > 0));
    assert.notEqual(diag.status, 'fail', JSON.stringify(diag.checks.filter((c) => c.status === 'fail')));
    record('health', health);
    await rpcError(client.raw('_cleveragents/health/check', { verbose: true }), -32602, 'ValidationError');
  });

  it('creates, lists, shows and deletes sessions', async () => {
    const s = await client.call(sessionCreate, { actor: 'builtin/echo', title: 'lifecycle' });
    assert.equal(s.title, 'lifecycle');
    const t = taskOf(await client.call(sendMessage, { message: userMessage('in session', { contextId: s.id }) }));
    const list = await client.call(sessionList, { pageSize: 100 });
    assert.ok(list.sessions.some((x) => x.id === s.id));
    // One token format for every list: a page continues where the last one ended; a foreign token is refused.
    const first = await client.call(sessionList, { pageSize: 1 });
    assert.equal(first.sessions.length, 1);
    assert.notEqual(first.nextPageToken, '');
    const second = await client.call(sessionList, { pageSize: 1, pageToken: first.nextPageToken });
    assert.deepEqual(
      second.sessions.map((x) => x.id),
      list.sessions.slice(1, 2).map((x) => x.id),
    );
    await rpcError(client.call(sessionList, { pageToken: 'not-a-token' }), -32602, 'ValidationError');
    assert.deepEqual(await client.call(sessionDelete, { sessionId: s.id }), { deleted: true, tasksDeleted: 1 });
    await rpcError(client.call(sessionShow, { sessionId: s.id }), -32001, 'ResourceNotFoundError');
    await rpcError(client.call(getTask, { id: t.id }), -32001, 'TaskNotFoundError');
    await rpcError(client.call(sessionDelete, { sessionId: s.id }), -32001, 'ResourceNotFoundError');
    const bad = await rpcError(client.call(sessionCreate, { actor: 'nobody/here' }), -32001, 'ResourceNotFoundError');
    assert.match(bad.hint ?? '', /builtin\/echo/);
    await rpcError(client.call(sessionCreate, { actor: 'Not A Name' }), -32602, 'ValidationError');
    await rpcError(client.raw('_cleveragents/session/create', { colour: 'red' }), -32602, 'ValidationError');
    record('session', { s, bad: bad.message });
  });

  it('forks a session (all turns or up to one) and resumes the given or the latest one', async () => {
    const s = await client.call(sessionCreate, { actor: 'builtin/echo', title: 'forked' });
    const t1 = taskOf(await client.call(sendMessage, { message: userMessage('one', { contextId: s.id }) }));
    const t2 = taskOf(await client.call(sendMessage, { message: userMessage('two', { contextId: s.id }) }));
    const all = await client.call(sessionFork, { sessionId: s.id });
    assert.deepEqual(all.forkedFrom, { sessionId: s.id, taskId: t2.id });
    assert.equal(all.taskCount, 2);
    const part = await client.call(sessionFork, { sessionId: s.id, atTaskId: t1.id, title: 'part' });
    const shown = await client.call(sessionShow, { sessionId: part.id });
    assert.deepEqual(
      shown.tasks.map((t) => [t.contextId, t.artifacts?.[0]?.parts[0]?.text]),
      [[part.id, t1.artifacts?.[0]?.parts[0]?.text]],
    );
    assert.notEqual(shown.tasks[0]?.id, t1.id);
    assert.equal((await client.call(sessionShow, { sessionId: s.id })).tasks.length, 2, 'the original is untouched');
    await rpcError(client.call(sessionFork, { sessionId: s.id, atTaskId: 'nope' }), -32602, 'ValidationError');
    await rpcError(client.call(sessionFork, { sessionId: 'no-such-session' }), -32001, 'ResourceNotFoundError');
    // The fork made last is the most recently active session.
    const latest = await client.call(sessionResume, {});
    assert.equal(latest.session.id, part.id);
    const named = await client.call(sessionResume, { sessionId: s.id, turns: 1 });
    assert.deepEqual(
      named.tasks.map((t) => t.id),
      [t2.id],
    );
    record('session-fork', {
      all: { title: all.title, taskCount: all.taskCount },
      part: { title: part.title, turns: shown.tasks.length },
      resumed: named.tasks.length,
    });
  });

  it('numbers turns in session show, lists no file changes for a chat that wrote none, and has nothing to undo', async () => {
    const s = await client.call(sessionCreate, { actor: 'builtin/echo' });
    await client.call(sendMessage, { message: userMessage('one', { contextId: s.id }) });
    await client.call(sendMessage, { message: userMessage('two', { contextId: s.id }) });
    const shown = await client.call(sessionShow, { sessionId: s.id, turns: 1 });
    assert.equal(shown.firstTurn, 2);
    assert.deepEqual(shown.changes, []);
    const none = await rpcError(client.call(sessionUndo, { sessionId: s.id }), -32004, 'BusinessRuleViolation');
    assert.match(none.message, /no turn left to undo/);
    await rpcError(client.call(sessionUndo, { sessionId: s.id, turn: 0 }), -32602, 'ValidationError');
    await rpcError(client.call(sessionUndo, { sessionId: 'no-such-session' }), -32001, 'ResourceNotFoundError');
    record('session-undo', { firstTurn: shown.firstTurn, refused: none.message.replace(s.id, '<id>') });
  });

  it('switches a session to another actor for its next turns, and refuses an unknown one with the actors to use', async () => {
    const s = await client.call(sessionCreate, { actor: 'builtin/echo' });
    const updated = await client.call(sessionUpdate, { sessionId: s.id, actor: 'builtin/conformance' });
    assert.equal(updated.actor, 'builtin/conformance');
    assert.equal((await client.call(sessionShow, { sessionId: s.id })).session.actor, 'builtin/conformance');
    const unknown = await rpcError(
      client.call(sessionUpdate, { sessionId: s.id, actor: 'local/nobody' }),
      -32001,
      'ResourceNotFoundError',
    );
    assert.match(unknown.message, /No actor named local\/nobody/);
    assert.match(String(unknown.hint), /available actors: .*builtin\/echo/);
    await rpcError(client.call(sessionUpdate, { sessionId: s.id }), -32602, 'ValidationError');
    await rpcError(
      client.call(sessionUpdate, { sessionId: 'no-such-session', actor: 'builtin/echo' }),
      -32001,
      'ResourceNotFoundError',
    );
    record('session-update', { actor: updated.actor, refused: unknown.message });
  });

  it("answers a session's diff (nothing changed) and its next turn's context (a built-in actor sends nothing)", async () => {
    const s = await client.call(sessionCreate, { actor: 'builtin/echo' });
    await client.call(sendMessage, { message: userMessage('one', { contextId: s.id }) });
    const diff = await client.call(sessionDiff, { sessionId: s.id });
    assert.deepEqual({ files: diff.files, unified: diff.unified }, { files: [], unified: '' });
    await rpcError(client.call(sessionDiff, { sessionId: s.id, turn: 9 }), -32001, 'ResourceNotFoundError');
    const context = await client.call(sessionContext, { sessionId: s.id });
    assert.equal(context.actor, 'builtin/echo');
    assert.equal(context.model, undefined);
    assert.equal(context.history.turns, 1);
    assert.deepEqual(context.tools, []);
    await rpcError(client.call(sessionContext, { sessionId: 'no-such-session' }), -32001, 'ResourceNotFoundError');
    record('session-diff-context', { files: diff.files.length, turns: context.history.turns });
  });

  it("keeps a session's context mode, copies it to a fork, and refuses a mode it does not know", async () => {
    const s = await client.call(sessionCreate, { actor: 'builtin/echo', context: 'full' });
    assert.equal(s.context, 'full');
    assert.equal((await client.call(sessionShow, { sessionId: s.id })).session.context, 'full');
    assert.equal((await client.call(sessionFork, { sessionId: s.id })).context, 'full');
    const plain = await client.call(sessionCreate, { actor: 'builtin/echo', context: 'map' });
    assert.equal((await client.call(sessionShow, { sessionId: plain.id })).session.context, 'map');
    assert.equal((await client.call(sessionCreate, { actor: 'builtin/echo' })).context, undefined, 'absent: map');
    const bad = await rpcError(
      client.raw('_cleveragents/session/create', { context: 'everything' }),
      -32602,
      'ValidationError',
    );
    assert.deepEqual(
      bad.fieldViolations.map((f) => [f.field, f.description]),
      [['context', 'must be one of map, full']],
    );
    record('session-context', { context: s.context, bad: bad.message });
  });

  it('answers unknown methods with -32601', async () => {
    await rpcError(client.raw('NoSuchMethod', {}), -32601, 'MethodNotFoundError');
    await rpcError(client.raw('_cleveragents/nothing/here', {}), -32601, 'MethodNotFoundError');
    await rpcError(client.raw('tasks/resubscribe', { id: 'x' }), -32601, 'MethodNotFoundError');
  });

  it("accepts the seed's method names with v1.0 semantics", async () => {
    const r = (await client.raw('message/send', { message: userMessage('alias') })) as { task: Task };
    assert.equal(r.task.status.state, 'TASK_STATE_COMPLETED');
    const got = (await client.raw('tasks/get', { id: r.task.id })) as Task;
    assert.equal(got.id, r.task.id);
    const list = (await client.raw('tasks/list', { pageSize: 1 })) as { tasks: Task[] };
    assert.equal(list.tasks.length, 1);
  });

  it('serves A2A v0.3 clients with v0.3 names and shapes', async () => {
    const old = await h.connect('0.3');
    const task = (await old.raw('message/send', {
      message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'old times' }] },
    })) as Record<string, unknown>;
    assert.equal(task['kind'], 'task');
    assert.equal((task['status'] as { state: string }).state, 'completed');
    const got = (await old.raw('tasks/get', { id: task['id'], historyLength: 1 })) as Record<string, unknown>;
    assert.equal(((got['history'] as unknown[]) ?? []).length, 1);
    const events: Array<Record<string, unknown>> = [];
    for await (const e of old.transport.stream('message/stream', {
      message: {
        kind: 'message',
        messageId: randomUUID(),
        role: 'user',
        parts: [{ kind: 'text', text: 'old stream' }],
      },
    })) {
      events.push(e.result as Record<string, unknown>);
    }
    assert.deepEqual(
      events.map((e) => e['kind']).filter((k, i, a) => a.indexOf(k) === i),
      ['task', 'status-update', 'artifact-update'],
    );
    assert.equal(events.at(-1)?.['final'], true);
    const err = await rpcError(old.raw('tasks/get', { id: 'missing' }), -32001, 'TaskNotFoundError');
    assert.equal(typeof err.data, 'object');
    await rpcError(
      old.raw('SendMessage', { message: userMessage('v1 name on a v0.3 connection') }),
      -32601,
      'MethodNotFoundError',
    );
    const set = (await old.raw('tasks/pushNotificationConfig/set', {
      taskId: task['id'],
      pushNotificationConfig: { url: 'https://hooks.example.com/old' },
    })) as { pushNotificationConfig: { id: string } };
    assert.equal(set.pushNotificationConfig.id, task['id']);
    const listed = (await old.raw('tasks/pushNotificationConfig/list', { id: task['id'] })) as unknown[];
    assert.equal(listed.length, 1);
    assert.equal(
      await old.raw('tasks/pushNotificationConfig/delete', {
        id: task['id'],
        pushNotificationConfigId: set.pushNotificationConfig.id,
      }),
      null,
    );
    record('v03', { task, events });
    if (old !== client) await old.close();
  });
}
