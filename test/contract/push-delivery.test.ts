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
import {
  A2AClient,
  A2AClientError,
  cancelTask,
  createPushConfig,
  getTask,
  listPushConfigs,
  sendMessage,
} from '../../src/protocol/client/index.ts';
import { eventually, startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.ts';

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
    // The deprecated name of the allowlist still works (CLEVERAGENTS_ALLOW_EGRESS is its successor).
    const env = { ...process.env, CLEVERAGENTS_ALLOW_EGRESS: '', CLEVERAGENTS_PUSH_ALLOW_HOSTS: '127.0.0.1' };
    server = await startHttpServer({ dataDir: dir, defaultActor: 'builtin/conformance', env });
    blockedServer = await startHttpServer({
      dataDir: dir2,
      defaultActor: 'builtin/conformance',
      env: { ...process.env, CLEVERAGENTS_ALLOW_EGRESS: '', CLEVERAGENTS_PUSH_ALLOW_HOSTS: '' },
    });
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

  /** A -32602 naming the field, whose message carries the egress guard's reason. */
  const refusedAt =
    (field: string, why: RegExp) =>
    (err: unknown): boolean => {
      assert.ok(err instanceof A2AClientError, String(err));
      assert.equal(err.code, -32602);
      assert.match(err.message, /^The push notification URL is refused: egress to /);
      assert.match(err.message, why);
      assert.deepEqual(
        err.fieldViolations.map((f) => f.field),
        [field],
      );
      return true;
    };

  it('refuses at create time a webhook aimed at a loopback address that is not allowlisted, and delivers nothing', async () => {
    const before = received.length;
    const client = A2AClient.remote({ url: blockedServer.baseUrl, token: TOKEN });
    const r = await client.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] },
    });
    assert.ok('task' in r);
    const port = new URL(hookUrl).port;
    await assert.rejects(
      client.call(createPushConfig, { taskId: r.task.id, url: hookUrl }),
      refusedAt(
        'url',
        new RegExp(
          `egress to 127\\.0\\.0\\.1 is refused: it is a loopback address; a server administrator may allow it with \`agents serve --allow-egress 127\\.0\\.0\\.1:${port}\``,
        ),
      ),
    );
    const listed = await client.call(listPushConfigs, { taskId: r.task.id });
    assert.deepEqual(listed.configs, [], 'nothing was stored');
    await client.call(cancelTask, { id: r.task.id });
    assert.equal(received.length, before);
  });

  it('refuses at create time the NAT64 and IPv4-compatible spellings of loopback, even where 127.0.0.1 is allowlisted', async () => {
    const client = A2AClient.remote({ url: server.baseUrl, token: TOKEN });
    const r = await client.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] },
    });
    assert.ok('task' in r);
    await assert.rejects(
      client.call(createPushConfig, { taskId: r.task.id, url: 'http://[64:ff9b::7f00:1]/' }),
      refusedAt(
        'url',
        /egress to \[64:ff9b::7f00:1\] is refused: it is a NAT64 form of 127\.0\.0\.1, a loopback address/,
      ),
    );
    await assert.rejects(
      client.call(createPushConfig, { taskId: r.task.id, url: 'http://[::127.0.0.1]:8080/hook' }),
      refusedAt('url', /IPv4-compatible form of 127\.0\.0\.1.*--allow-egress \[::7f00:1\]:8080/),
    );
    await client.call(cancelTask, { id: r.task.id });
  });

  it('refuses an inline config aimed at a refused address before anything is stored', async () => {
    const client = A2AClient.remote({ url: blockedServer.baseUrl, token: TOKEN });
    const messageId = randomUUID();
    await assert.rejects(
      client.call(sendMessage, {
        message: { messageId, role: 'ROLE_USER', parts: [{ text: 'x' }] },
        configuration: { taskPushNotificationConfig: { url: 'http://169.254.169.254/latest' } },
      }),
      refusedAt(
        'configuration.taskPushNotificationConfig.url',
        /egress to 169\.254\.169\.254 is refused: it is a link-local address/,
      ),
    );
    // Nothing was stored under that message: the same id without the config now starts the task.
    const r = await client.call(sendMessage, { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    assert.ok('task' in r);
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
    const env = { ...process.env, CLEVERAGENTS_ALLOW_EGRESS: '127.0.0.1', CLEVERAGENTS_CONFORMANCE_STEP_MS: '50' };
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
