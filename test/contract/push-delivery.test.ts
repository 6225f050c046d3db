/**
 * Webhook delivery: every event of a task reaches the registered receiver, in order, with its
 * token — including the events of a blocking send that registered its config inline, and events
 * still pending when the server was killed (the durable outbox; issue #8, defect 8).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { A2AClient, cancelTask, createPushConfig, getTask, sendMessage } from '../../src/protocol/client/index.js';
import { eventually, startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.js';

describe('push notification delivery', () => {
  let receiver: Server;
  let hookUrl: string;
  const received: Array<{ headers: IncomingHttpHeaders; body: any }> = [];
  let failNext = 0;
  /** While set, every delivery is answered with this status (and not recorded). */
  let failAll: number | undefined;
  let server: HttpServerProcess;
  let blockedServer: HttpServerProcess;
  const dir = tempDir();
  const dir2 = tempDir();

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (failAll !== undefined) {
          res.statusCode = failAll;
          return res.end();
        }
        if (failNext > 0) {
          failNext--;
          res.statusCode = 503;
          return res.end();
        }
        received.push({ headers: req.headers, body: JSON.parse(body) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const env = { ...process.env, CLEVERAGENTS_PUSH_ALLOW_HOSTS: '127.0.0.1' };
    server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance', env });
    blockedServer = await startHttpServer({ dataDir: dir2, defaultActor: 'builtin/conformance' });
  });
  after(async () => {
    await server.stop();
    await blockedServer.stop();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dir2, { recursive: true, force: true });
  });

  it('posts each later event of the task as a StreamResponse, retrying a refused delivery', async () => {
    const client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const r = await client.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] },
    });
    assert.ok('task' in r);
    await client.call(createPushConfig, {
      taskId: r.task.id,
      url: hookUrl,
      token: 'verify-me',
      authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
    });
    failNext = 1;
    await client.call(cancelTask, { id: r.task.id });
    const got = await eventually(async () => (received.length >= 1 ? received : undefined), 8000, 'a webhook delivery');
    assert.equal(got[0]?.body.statusUpdate.status.state, 'TASK_STATE_CANCELED');
    assert.equal(got[0]?.body.statusUpdate.taskId, r.task.id);
    assert.equal(got[0]?.headers['x-a2a-notification-token'], 'verify-me');
    assert.equal(got[0]?.headers['authorization'], 'Bearer receiver-secret');
  });

  it('never delivers to a loopback address that is not allowlisted', async () => {
    const before = received.length;
    const client = A2AClient.remote({ url: blockedServer.baseUrl, token: TOKEN });
    const r = await client.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] },
    });
    assert.ok('task' in r);
    await client.call(createPushConfig, { taskId: r.task.id, url: hookUrl });
    await client.call(cancelTask, { id: r.task.id });
    await new Promise((res) => setTimeout(res, 600));
    assert.equal(received.length, before);
  });

  const statesFor = (taskId: string): string[] =>
    received
      .filter((r) => (r.body.statusUpdate ?? r.body.artifactUpdate)?.taskId === taskId)
      .map((r) => r.body.statusUpdate?.status.state ?? 'artifact');

  it('delivers every event of a blocking SendMessage to the config given inline with it', async () => {
    // Fails on the main before the fix: the config was registered after the task had finished.
    const client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const r = await client.call(sendMessage, {
      message: {
        messageId: `tck-complete-task-${randomUUID()}`,
        role: 'ROLE_USER',
        parts: [{ text: 'tell the hook' }],
      },
      configuration: { taskPushNotificationConfig: { url: hookUrl, token: 'inline-token' } },
    });
    assert.ok('task' in r);
    assert.equal(r.task.status.state, 'TASK_STATE_COMPLETED');
    const states = await eventually(
      async () => {
        const s = statesFor(r.task.id);
        return s.includes('TASK_STATE_COMPLETED') ? s : undefined;
      },
      8000,
      'the inline webhook deliveries',
    );
    assert.deepEqual(states, ['TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED'], 'every event, in order');
    assert.ok(
      received
        .filter((x) => x.body.statusUpdate?.taskId === r.task.id)
        .every((x) => x.headers['x-a2a-notification-token'] === 'inline-token'),
    );
  });

  it('refuses an invalid inline config before anything is stored', async () => {
    const client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const messageId = randomUUID();
    await assert.rejects(
      client.call(sendMessage, {
        message: { messageId, role: 'ROLE_USER', parts: [{ text: 'x' }] },
        configuration: { taskPushNotificationConfig: { url: hookUrl, id: 'bad id!' } },
      }),
      (err: Error & { code?: number }) => err.code === -32602 && /config id/.test(err.message),
    );
    // Nothing was stored under that message: the same id with a valid config now starts the task.
    const r = await client.call(sendMessage, { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    assert.ok('task' in r);
  });

  it('keeps deliveries pending across a SIGKILL: after the restart the receiver gets them, in order', async () => {
    const dataDir = tempDir();
    const env = { ...process.env, CLEVERAGENTS_PUSH_ALLOW_HOSTS: '127.0.0.1', CLEVERAGENTS_CONFORMANCE_STEP_MS: '50' };
    let killed = await startHttpServer({ dataDir, defaultActor: 'builtin/conformance', env });
    try {
      let client = A2AClient.remote({ url: killed.baseUrl, token: TOKEN });
      failAll = 500;
      let attempts = 0;
      const counting = (): void => {
        attempts++;
      };
      receiver.on('request', counting);
      const r = await client.call(sendMessage, {
        message: {
          messageId: `tck-long-running-${randomUUID()}`,
          role: 'ROLE_USER',
          parts: [{ text: 'deliver later' }],
        },
        configuration: { taskPushNotificationConfig: { url: hookUrl } },
      });
      assert.ok('task' in r);
      assert.equal(r.task.status.state, 'TASK_STATE_COMPLETED');
      await eventually(async () => (attempts >= 2 ? true : undefined), 8000, 'failed delivery attempts');
      receiver.off('request', counting);
      assert.deepEqual(statesFor(r.task.id), [], 'nothing delivered while the receiver fails');
      await killed.stop('SIGKILL');
      const firstLog = killed.stderr();

      failAll = undefined;
      killed = await startHttpServer({ dataDir, defaultActor: 'builtin/conformance', env });
      client = A2AClient.remote({ url: killed.baseUrl, token: TOKEN });
      const task = await client.call(getTask, { id: r.task.id });
      const states = await eventually(
        async () => {
          const s = statesFor(r.task.id);
          return s.includes('TASK_STATE_COMPLETED') ? s : undefined;
        },
        20_000,
        'the pending deliveries after the restart',
      ).catch((err: unknown) => {
        // What arrived and what the servers said, to tell a lost entry from a slow one.
        process.stderr.write(
          `received: ${statesFor(r.task.id).join(',')}\nfirst server log:\n${firstLog}\nserver log:\n${killed.stderr()}\n`,
        );
        throw err;
      });
      // tck-long-running: a start message and five progress messages, the result, completed.
      assert.deepEqual(
        states,
        [...Array<string>(6).fill('TASK_STATE_WORKING'), 'artifact', 'TASK_STATE_COMPLETED'],
        'every event, once, in order',
      );
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    } finally {
      failAll = undefined;
      await killed.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
