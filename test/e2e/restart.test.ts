/** What is written before a restart — graceful or a kill -9 — is readable after it. */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import {
  A2AClient,
  createPushConfig,
  getTask,
  listPushConfigs,
  listTasks,
  sendMessage,
  sendStreamingMessage,
  sessionCreate,
  sessionShow,
  subscribeToTask,
  type StreamResponse,
  type Task,
} from '../../src/protocol/client/index.ts';
import { eventually, startHttpServer, tempDir, TOKEN } from '../support/harness.ts';

const msg = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: randomUUID(),
  role: 'ROLE_USER' as const,
  parts: [{ text }],
  ...extra,
});

describe('restart', () => {
  const dir = tempDir();
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps tasks, their events, sessions and push configs across a graceful restart', async () => {
    let server = await startHttpServer({ dataDir: dir });
    let client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const s = await client.call(sessionCreate, { title: 'survives' });
    const r = await client.call(sendMessage, { message: msg('remember me', { contextId: s.id }) });
    assert.ok('task' in r);
    const before = r.task;
    await client.call(createPushConfig, { taskId: before.id, url: 'https://hooks.example.com/x' });
    assert.equal(await server.stop('SIGTERM'), 0, 'a graceful shutdown exits 0');

    server = await startHttpServer({ dataDir: dir });
    client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    try {
      assert.deepEqual(await client.call(getTask, { id: before.id }), before);
      const shown = await client.call(sessionShow, { sessionId: s.id });
      assert.equal(shown.session.title, 'survives');
      assert.deepEqual(
        shown.tasks.map((t) => t.id),
        [before.id],
      );
      assert.equal((await client.call(listPushConfigs, { taskId: before.id })).configs.length, 1);
      const list = await client.call(listTasks, { contextId: s.id });
      assert.equal(list.totalSize, 1);
    } finally {
      await server.stop();
    }
  });

  it('ends a turn killed mid-run (SIGKILL) as FAILED at the next start, keeping its events; a resuming subscriber gets the final event', async () => {
    // Fails on the main before the fix: the task stayed TASK_STATE_WORKING forever.
    let server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    let client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const seen: unknown[] = [];
    let task: Task | undefined;
    let lastSeq = 0;
    const stream = client.stream(sendStreamingMessage, {
      message: msg('long', { messageId: `tck-long-running-${randomUUID()}` }),
    });
    for await (const { seq, event } of stream) {
      seen.push(event);
      lastSeq = seq;
      if ('task' in event) task = event.task;
      if (seen.length === 3) break;
    }
    assert.ok(task);
    await server.stop('SIGKILL');

    server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    try {
      const after = await client.call(getTask, { id: task.id });
      assert.equal(after.status.state, 'TASK_STATE_FAILED');
      assert.match(after.status.message?.parts[0]?.text ?? '', /server restarted/);
      assert.ok(
        (after.history ?? []).length >= 3,
        'the user message, the progress messages and the final one survived',
      );
      const resumed: Array<{ seq: number; event: StreamResponse }> = [];
      for await (const e of client.stream(subscribeToTask, { id: task.id }, { lastEventSeq: lastSeq })) resumed.push(e);
      const final = resumed.at(-1)?.event;
      assert.ok(final && 'statusUpdate' in final, 'the final status event');
      assert.equal(final.statusUpdate.status.state, 'TASK_STATE_FAILED');
      assert.ok(
        resumed.every((e) => e.seq > lastSeq),
        'nothing seen before is repeated',
      );
    } finally {
      await server.stop();
    }
  });

  it('lets a running turn finish on SIGTERM (its blocked sender gets the answer), and ends one that outlives the drain deadline as FAILED', async () => {
    const fast = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    let client = A2AClient.remote({ url: fast.baseUrl, token: TOKEN });
    const s = await client.call(sessionCreate, { actor: 'builtin/conformance' });
    // About a second of work (5 steps of 200 ms), well inside the default drain deadline.
    const blocked = client.call(sendMessage, {
      message: msg('finish me', { messageId: `tck-long-running-${randomUUID()}`, contextId: s.id }),
    });
    await eventually(
      async () =>
        (await client.call(listTasks, { contextId: s.id, status: 'TASK_STATE_WORKING' })).totalSize > 0
          ? true
          : undefined,
      5000,
      'the turn to start',
    );
    const stopped = fast.stop('SIGTERM');
    const answer = await blocked;
    assert.ok('task' in answer);
    assert.equal(answer.task.status.state, 'TASK_STATE_COMPLETED', 'the turn finished during the drain');
    assert.equal(await stopped, 0);

    // Steps of 3 s: the turn outlives a 1 s drain deadline.
    const env = { ...process.env, CLEVERAGENTS_CONFORMANCE_STEP_MS: '3000', CLEVERAGENTS_DRAIN_MS: '1000' };
    let server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance', env });
    client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const r = await client.call(sendMessage, {
      message: msg('too slow', { messageId: `tck-long-running-${randomUUID()}` }),
      configuration: { returnImmediately: true },
    });
    assert.ok('task' in r);
    assert.equal(await server.stop('SIGTERM'), 0);
    server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    try {
      const after = await client.call(getTask, { id: r.task.id });
      assert.equal(after.status.state, 'TASK_STATE_FAILED');
      assert.match(after.status.message?.parts[0]?.text ?? '', /server shut down/);
    } finally {
      await server.stop();
    }
  });

  it('does not settle a turn that another live process on the same database is running', async () => {
    const env = { ...process.env, CLEVERAGENTS_CONFORMANCE_STEP_MS: '600' };
    const a = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance', env });
    const clientA = A2AClient.remote({ url: a.baseUrl, token: TOKEN });
    const r = await clientA.call(sendMessage, {
      message: msg('mine', { messageId: `tck-long-running-${randomUUID()}` }),
      configuration: { returnImmediately: true },
    });
    assert.ok('task' in r);
    // A second process starts (as every local CLI call does) while the first one runs the turn.
    const b = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    const clientB = A2AClient.remote({ url: b.baseUrl, token: TOKEN });
    try {
      assert.notEqual((await clientB.call(getTask, { id: r.task.id })).status.state, 'TASK_STATE_FAILED');
      const done = await eventually(
        async () => {
          const t = await clientB.call(getTask, { id: r.task.id });
          return t.status.state === 'TASK_STATE_WORKING' || t.status.state === 'TASK_STATE_SUBMITTED' ? undefined : t;
        },
        15_000,
        'the task to finish',
      );
      assert.equal(done.status.state, 'TASK_STATE_COMPLETED', 'the live process finished it');
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});
