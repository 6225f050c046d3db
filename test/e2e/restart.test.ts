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
  type Task,
} from '../../src/protocol/client/index.js';
import { startHttpServer, tempDir, TOKEN } from '../support/harness.js';

const msg = (text: string, extra: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER' as const, parts: [{ text }], ...extra });

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
      assert.deepEqual(shown.tasks.map((t) => t.id), [before.id]);
      assert.equal((await client.call(listPushConfigs, { taskId: before.id })).configs.length, 1);
      const list = await client.call(listTasks, { contextId: s.id });
      assert.equal(list.totalSize, 1);
    } finally {
      await server.stop();
    }
  });

  it('keeps every event stored before the server is killed mid-task', async () => {
    let server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    let client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const seen: unknown[] = [];
    let task: Task | undefined;
    const stream = client.stream(sendStreamingMessage, { message: msg('long', { messageId: `tck-long-running-${randomUUID()}` }) });
    for await (const { event } of stream) {
      seen.push(event);
      if ('task' in event) task = event.task;
      if (seen.length === 3) break;
    }
    assert.ok(task);
    await server.stop('SIGKILL');

    server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance' });
    client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    try {
      const after = await client.call(getTask, { id: task.id });
      assert.equal(after.status.state, 'TASK_STATE_WORKING');
      assert.ok((after.history ?? []).length >= 2, 'the user message and the progress messages survived');
    } finally {
      await server.stop();
    }
  });
});
