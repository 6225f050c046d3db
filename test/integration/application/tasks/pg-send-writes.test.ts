/**
 * The writes a blocking SendMessage makes to PostgreSQL (issue #40, point 7: at most three round
 * trips that write): the server built from the sources as `agents serve` builds it, the echo actor
 * answering, the statements counted as the bench counts them (bench/lib/pg-statements.ts). And
 * what the batching must keep: every event stored in order, the session counted and its activity
 * moved, the task listed as its last event left it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PgStatementCounter } from '../../../../bench/lib/pg-statements.ts';
import { buildApp, createLogger } from '../../../../src/main/app.ts';
import { FacadeAuthenticator } from '../../../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../../../src/protocol/server/http.server.ts';
import type { PgStorage } from '../../../../src/infrastructure/persistence/postgres/pg-storage.ts';
import { eventually } from '../../../support/eventually.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../../../support/postgres.ts';

const TOKEN = 'ca_test_pg_send_writes_token_0123456789';

interface SentTask {
  id: string;
  contextId: string;
  status: { state: string };
  artifacts?: { parts: { text?: string }[] }[];
}

describe('a blocking SendMessage on PostgreSQL', { skip: pgSkip() }, () => {
  let made: PgTestDatabase;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let server: A2aHttpServer;
  let port = 0;
  let dir = '';
  const counter = new PgStatementCounter();

  before(async () => {
    made = await createPgDatabase('ca_sendw');
    dir = mkdtempSync(join(tmpdir(), 'ca-pg-send-'));
    const logger = createLogger('error');
    app = await buildApp({
      dataDir: dir,
      logger,
      databaseUrl: made.url,
      defaultActor: 'builtin/echo',
      card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
    });
    await app.facade.users.ensureServerToken(TOKEN);
    server = new A2aHttpServer({
      dispatcher: app.dispatcher,
      card: app.card,
      auth: new FacadeAuthenticator(app.facade.authentication),
      logger,
    });
    port = (await server.listen(0, '127.0.0.1')).port;
  });

  after(async () => {
    counter.restore();
    await server?.close(2_000);
    await app?.close();
    await made?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function call(method: string, params: unknown): Promise<unknown> {
    const res = await fetch(`http://127.0.0.1:${port}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: unknown };
    assert.equal(body.error, undefined, JSON.stringify(body.error));
    return body.result;
  }

  const send = async (text: string, contextId?: string): Promise<SentTask> => {
    const message = { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], contextId };
    return ((await call('SendMessage', { message })) as { task: SentTask }).task;
  };

  it('writes in at most three round trips, storing every event, the session and its count', async () => {
    // What is made once (the namespace, the key's last use) is made before the count.
    for (let i = 0; i < 3; i++) await send('warm up');
    const n = 10;
    counter.start();
    const sent: SentTask[] = [];
    for (let i = 0; i < n; i++) sent.push(await send(`hello ${i}`));
    await new Promise((r) => setTimeout(r, 100));
    const tally = counter.stop();
    assert.ok(
      tally.writingRoundTrips / n <= 3,
      `${tally.writingRoundTrips / n} writing round trips per message: ${JSON.stringify([...tally.shapes.keys()])}`,
    );
    for (const [i, task] of sent.entries()) {
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      const stored = (await call('GetTask', { id: task.id })) as SentTask;
      assert.equal(stored.status.state, 'TASK_STATE_COMPLETED');
      const text = (stored.artifacts?.[0]?.parts ?? []).map((p) => p.text ?? '').join('');
      assert.match(text, new RegExp(`^You said: hello ${i}`));
      assert.equal((await app.storage.sessions.get(task.contextId))?.taskCount, 1);
    }
  });

  it('reads the key once per connection while the account tables stay unchanged', async () => {
    const db = (app.storage as PgStorage).db;
    await send('warm up');
    await eventually(async () => db.isListening('ca_auth_changes') || undefined, 5000, 'the account listener');
    await send('warm up'); // the grant the next requests reuse (fetch keeps the connection)
    counter.start();
    for (let i = 0; i < 3; i++) await send(`again ${i}`);
    const tally = counter.stop();
    const keyReads = [...tally.shapes].filter(([shape]) => shape.includes('from "api_keys"'));
    assert.deepEqual(keyReads, [], 'the key was read again for a request on the same connection');
  });

  it('counts a second task into an existing session and moves its activity forward', async () => {
    const first = await send('first');
    const second = await send('second', first.contextId);
    assert.equal(second.contextId, first.contextId);
    const session = await app.storage.sessions.get(first.contextId);
    assert.equal(session?.taskCount, 2);
    const stored = await app.storage.tasks.get(second.id);
    assert.ok(session && stored && session.updatedAt >= (stored.task.status.timestamp ?? ''));
  });
});
