/**
 * Webhook configs changed on one instance reach the instance running the task's turns (issue #40,
 * point 2): two `agents serve` instances on one PostgreSQL database; the task runs on A, its
 * configs are created and deleted through B. A control webhook, registered on A from the start,
 * shows that A stored and delivered each event; the webhook under test must follow B's changes
 * from the next event on.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import {
  A2AClient,
  createPushConfig,
  deletePushConfig,
  sendMessage,
  type SendMessageRequest,
} from '../../src/protocol/client/index.ts';
import { eventually, startHttpServer, tempDir, TOKEN, type HttpServerProcess } from '../support/harness.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';

interface Delivery {
  /** The receiver's path: one per webhook. */
  hook: string;
  /** The status message the event carried. */
  text: string | undefined;
}

describe('webhook configs changed on another instance', { skip: pgSkip() }, () => {
  let db: PgTestDatabase;
  let dataDir: string;
  let a: HttpServerProcess;
  let b: HttpServerProcess;
  let receiver: Server;
  let base: string;
  let sql: pg.Client;
  const deliveries: Delivery[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const update = (JSON.parse(body) as { statusUpdate?: any }).statusUpdate;
        deliveries.push({
          hook: req.url ?? '',
          text: update?.status?.message?.parts?.[0]?.text as string | undefined,
        });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    db = await createPgDatabase('ca_push');
    dataDir = tempDir('ca-push-');
    const env = { ...process.env, CLEVERAGENTS_DATABASE_URL: db.url, CLEVERAGENTS_RUNNER_LEASE_MS: '1500' };
    // The first instance migrates the database; the second starts after it.
    a = await startHttpServer({ dataDir, defaultActor: 'builtin/conformance', env });
    b = await startHttpServer({ dataDir, defaultActor: 'builtin/conformance', env });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  after(async () => {
    await sql?.end().catch(() => {});
    await Promise.all([a?.stop(), b?.stop()]);
    receiver?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends a follow-up to A (the conformance actor answers with one WORKING status) and waits for its control delivery. */
  async function followUpOnA(taskId: string, text: string): Promise<void> {
    const client = A2AClient.remote({ url: a.baseUrl, token: TOKEN });
    const m: SendMessageRequest = {
      message: { messageId: randomUUID(), role: 'ROLE_USER', taskId, parts: [{ text }] },
    };
    await client.call(sendMessage, m);
    const n = deliveries.filter((d) => d.hook === '/control').length;
    await eventually(
      async () => (deliveries.filter((d) => d.hook === '/control').length > n ? true : undefined),
      8000,
      `the control webhook's delivery of the follow-up "${text}"`,
    );
  }

  /** Waits until A's outbox holds nothing more for the task (each entry was delivered or dropped). */
  async function outboxEmpty(taskId: string): Promise<void> {
    await eventually(
      async () => {
        const r = await sql.query('select count(*)::int as n from push_outbox where task_id = $1', [taskId]);
        return r.rows[0].n === 0 ? true : undefined;
      },
      8000,
      'an empty push outbox',
    );
  }

  it('delivers to a webhook created on B from the next event A stores, and stops after its delete on B', async () => {
    const onA = A2AClient.remote({ url: a.baseUrl, token: TOKEN });
    const onB = A2AClient.remote({ url: b.baseUrl, token: TOKEN });
    // The conformance actor's default: WORKING, one more WORKING status per follow-up.
    const r = await onA.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'stay' }] },
    });
    assert.ok('task' in r);
    const taskId = r.task.id;
    await onA.call(createPushConfig, { taskId, id: 'control', url: `${base}/control` });
    await followUpOnA(taskId, 'one');

    await onB.call(createPushConfig, { taskId, id: 'watched', url: `${base}/watched` });
    await followUpOnA(taskId, 'two');
    await eventually(
      async () => (deliveries.some((d) => d.hook === '/watched') ? true : undefined),
      8000,
      'a delivery to the webhook created on B',
    );
    await outboxEmpty(taskId);
    const delivered = deliveries.filter((d) => d.hook === '/watched').length;
    assert.ok(delivered >= 1);

    await onB.call(deletePushConfig, { taskId, id: 'watched' });
    await followUpOnA(taskId, 'three');
    await followUpOnA(taskId, 'four');
    await outboxEmpty(taskId);
    assert.deepEqual(
      deliveries.filter((d) => d.hook === '/watched').slice(delivered),
      [],
      'nothing reached the webhook deleted on B',
    );
    // The control webhook got each follow-up's status, and nothing else.
    assert.deepEqual(
      deliveries.filter((d) => d.hook === '/control').map((d) => d.text),
      Array.from({ length: 4 }, () => 'Follow-up message received'),
    );
  });
});
