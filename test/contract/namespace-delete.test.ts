/**
 * Deleting a namespace through the whole agent (in memory): what lives in it — a session and its
 * task, made over A2A in that namespace — is counted and refused, then deleted with force, and
 * the deletion is in the audit log.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../src/application/index.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import {
  A2AClient,
  A2AClientError,
  getTask,
  namespaceDelete,
  sendMessage,
  sessionList,
} from '../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../src/protocol/server/in-memory.transport.ts';
import { tempDir } from '../support/harness.ts';
import { taskOf, userMessage } from './a2a.suite.ts';

describe('namespace delete through the agent', () => {
  const dataDir = tempDir('ca-ns-delete-');
  let app: App;
  let client: A2AClient;
  before(async () => {
    app = await buildApp({ dataDir, inMemory: true, card: { endpoint: 'memory://', auth: 'none' } });
    await app.facade.namespaces.create('team', LOCAL_PRINCIPAL);
    const principal = await app.facade.namespaces.localPrincipal();
    client = new A2AClient(new InMemoryClientTransport(app.dispatcher, () => ({}), principal, '1.0'));
  });
  after(async () => {
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses while it holds a session and a task, then deletes them with force, audited', async () => {
    client.tenant = 'team';
    const task = taskOf(await client.call(sendMessage, { message: userMessage('hello team') }));
    assert.equal((await client.call(sessionList, {})).totalSize, 1);
    client.tenant = undefined;

    const err = await client.call(namespaceDelete, { name: 'team' }).then(
      () => assert.fail('deleted a namespace that is not empty'),
      (e: unknown) => e as A2AClientError,
    );
    assert.ok(err instanceof A2AClientError);
    assert.equal(err.type, 'EntityInUseError');
    assert.match(err.message, /^Namespace team is not empty: it holds 1 session, 1 task$/);
    client.tenant = 'team';
    assert.equal((await client.call(sessionList, {})).totalSize, 1, 'nothing was deleted');
    client.tenant = undefined;

    const r = await client.call(namespaceDelete, { name: 'team', force: true });
    assert.deepEqual(r, { name: 'team', deleted: true, removed: { entities: 0, sessions: 1, tasks: 1, plans: 0 } });
    client.tenant = 'team';
    assert.equal((await client.call(sessionList, {})).totalSize, 0);
    await assert.rejects(client.call(getTask, { id: task.id }), (e: unknown) => e instanceof A2AClientError);
    client.tenant = undefined;
    assert.deepEqual(
      (await app.facade.namespaces.localPrincipal()).roles,
      { local: 'owner' },
      'the membership went with it',
    );
    const audit = await app.facade.audit.list({ event: 'namespace.deleted' }, LOCAL_PRINCIPAL);
    assert.deepEqual(
      audit.events.map((e) => [e.principal, e.namespace, e.details]),
      [['local', 'team', { force: true, removed: { entities: 0, sessions: 1, tasks: 1, plans: 0 } }]],
    );
  });
});
