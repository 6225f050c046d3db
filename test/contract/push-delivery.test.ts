/** Webhook delivery: every event of a task reaches the registered receiver, in order, with its token. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { A2AClient, cancelTask, createPushConfig, sendMessage } from '../../src/protocol/client/index.js';
import { eventually, startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.js';

describe('push notification delivery', () => {
  let receiver: Server;
  let hookUrl: string;
  const received: Array<{ headers: IncomingHttpHeaders; body: any }> = [];
  let failNext = 0;
  let server: HttpServerProcess;
  let blockedServer: HttpServerProcess;
  const dir = tempDir();
  const dir2 = tempDir();

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
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
    const r = await client.call(sendMessage, { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] } });
    assert.ok('task' in r);
    await client.call(createPushConfig, { taskId: r.task.id, url: hookUrl, token: 'verify-me', authentication: { scheme: 'Bearer', credentials: 'receiver-secret' } });
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
    const r = await client.call(sendMessage, { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] } });
    assert.ok('task' in r);
    await client.call(createPushConfig, { taskId: r.task.id, url: hookUrl });
    await client.call(cancelTask, { id: r.task.id });
    await new Promise((res) => setTimeout(res, 600));
    assert.equal(received.length, before);
  });
});
