/**
 * A webhook given with the message (`configuration.taskPushNotificationConfig`) is stored with its
 * task: many sends at once all succeed and each task lists its config, and a retry of a message
 * answers with the same task, config included (issue #40, point 1: on PostgreSQL the config was
 * written on another connection than the task and could land first, "task not found"). Run on the
 * embedded SQLite store and, when CA_TEST_PG_URL is set, on PostgreSQL, through the real app.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { A2AClient, getPushConfig, getTask, listPushConfigs, sendMessage } from '../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../src/protocol/server/in-memory.transport.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { LOCAL_PRINCIPAL } from '../../src/application/index.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';
import { tempDir } from '../support/harness.ts';

const ENGINES = [
  { name: 'SQLite', postgres: false, skip: false as string | false },
  { name: 'PostgreSQL', postgres: true, skip: pgSkip() },
];

/** Sends at once: enough that the task's write and the config's raced on a pool of connections. */
const CONCURRENT = 100;

for (const engine of ENGINES) {
  describe(`a webhook given with the message (${engine.name})`, { skip: engine.skip }, () => {
    let app: App;
    let db: PgTestDatabase | undefined;
    let client: A2AClient;
    let receiver: Server;
    let hookUrl: string;

    before(async () => {
      receiver = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      db = engine.postgres ? await createPgDatabase('ca_inline_push') : undefined;
      app = await buildApp({
        dataDir: tempDir(),
        inMemory: !engine.postgres,
        databaseUrl: db?.url,
        defaultActor: 'builtin/conformance',
        validateResults: true,
        allowEgress: ['127.0.0.1'],
        card: { endpoint: 'memory://', auth: 'none' },
      });
      client = new A2AClient(
        new InMemoryClientTransport(app.dispatcher, () => app.card.publicCard('1.0').card, LOCAL_PRINCIPAL, '1.0'),
      );
    });

    after(async () => {
      await app?.close();
      await db?.drop();
      await new Promise<void>((r) => receiver?.close(() => r()));
    });

    const send = (messageId: string, configId: string) =>
      client.call(sendMessage, {
        message: { messageId, role: 'ROLE_USER', parts: [{ text: `hello ${configId}` }] },
        configuration: { taskPushNotificationConfig: { id: configId, url: hookUrl, token: `t-${configId}` } },
      });

    it(`stores the config of each of ${CONCURRENT} concurrent sends with its task`, async () => {
      const runs = Array.from({ length: CONCURRENT }, (_, i) => ({ messageId: randomUUID(), configId: `hook-${i}` }));
      const results = await Promise.allSettled(runs.map((r) => send(r.messageId, r.configId)));
      const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${i}: ${String(r.reason)}`] : []));
      assert.deepEqual(failed, [], `${failed.length} of ${CONCURRENT} sends failed`);
      for (const [i, r] of results.entries()) {
        assert.ok(r.status === 'fulfilled' && 'task' in r.value, `send ${i} answers with a task`);
        const taskId = r.value.task.id;
        const listed = await client.call(listPushConfigs, { taskId });
        assert.deepEqual(
          listed.configs.map((c) => [c.id, c.url]),
          [[`hook-${i}`, hookUrl]],
          `task ${i} lists its config`,
        );
        const one = await client.call(getPushConfig, { taskId, id: `hook-${i}` });
        assert.equal(one.url, hookUrl);
      }
    });

    it('answers a retry of the message with the same task, its config still listed', async () => {
      const messageId = randomUUID();
      const first = await send(messageId, 'retried');
      assert.ok('task' in first);
      const again = await send(messageId, 'retried');
      assert.ok('task' in again);
      assert.equal(again.task.id, first.task.id);
      const listed = await client.call(listPushConfigs, { taskId: first.task.id });
      assert.deepEqual(
        listed.configs.map((c) => c.id),
        ['retried'],
      );
      assert.equal((await client.call(getTask, { id: first.task.id })).id, first.task.id);
    });
  });
}
