/**
 * Contract cases of the account methods (extension 1.3). Local mode (memory, stdio) has one user
 * and no keys: whoami answers the local user, user and key methods refuse and say to run a server.
 * Over HTTP the server token is the administrator's key: users and keys are made, listed,
 * disabled, revoked, and the audit log has it all.
 */
import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import {
  A2AClient,
  auditList,
  keyCreate,
  keyList,
  keyRevoke,
  userAdd,
  userDisable,
  userEnable,
  userList,
  whoami,
} from '../../src/protocol/client/index.ts';
import { rpcError } from './a2a.suite.ts';
import type { SuiteContext } from './suite-context.ts';

export function accountSuite(ctx: SuiteContext): void {
  let client: A2AClient;
  const local = ctx.transport !== 'http';
  before(() => {
    client = ctx.harness().client;
  });

  it('whoami: the local user locally; the administrator behind the server token', async () => {
    const me = await client.call(whoami, {});
    assert.equal(me.admin, true);
    if (local) {
      assert.equal(me.user, 'local');
      assert.equal(me.kind, 'local');
    } else {
      assert.equal(me.user, 'admin');
      assert.equal(me.kind, 'key');
      assert.match(me.credential ?? '', /^st_/);
    }
    assert.ok(me.namespaces.some((n) => n.name === 'local' && n.role === 'owner'));
    ctx.record('whoami', { admin: me.admin, namespace: me.namespace, defaultNamespace: me.defaultNamespace });
  });

  it('users and keys: refused in local mode; made, listed, disabled and revoked on a server', async () => {
    if (local) {
      // One call at a time: a refusal must not arrive before anyone awaits it.
      for (const call of [
        () => client.call(userAdd, { name: 'erin' }),
        () => client.call(userList, {}),
        () => client.call(userDisable, { name: 'erin' }),
        () => client.call(userEnable, { name: 'erin' }),
        () => client.call(keyCreate, { name: 'ci' }),
        () => client.call(keyList, {}),
        () => client.call(keyRevoke, { id: 'ca_aaaaaaaaaaaa' }),
      ]) {
        const err = await rpcError(call(), -32004, 'UnsupportedOperationError');
        assert.match(err.message, /local mode has one user and no keys; run `agents serve` for a server/);
      }
      return;
    }
    const made = await client.call(userAdd, { name: 'erin' });
    assert.equal(made.user.defaultNamespace, 'erin');
    assert.ok((await client.call(userList, {})).users.some((u) => u.name === 'erin'));
    assert.ok((await client.call(userDisable, { name: 'erin' })).disabledAt);
    assert.equal((await client.call(userEnable, { name: 'erin' })).disabledAt, undefined);
    const key = await client.call(keyCreate, { name: 'ci', expiresInDays: 7 });
    assert.ok((await client.call(keyList, {})).keys.some((k) => k.id === key.id));
    assert.ok((await client.call(keyRevoke, { id: key.id })).revokedAt);
    await rpcError(client.call(keyRevoke, { id: 'ca_aaaaaaaaaaaa' }), -32001, 'ResourceNotFoundError');
    await rpcError(client.call(userAdd, { name: 'root' }), -32602, 'ValidationError');
  });

  it('audit list: administrators read it, newest first, filtered', async () => {
    const all = await client.call(auditList, { limit: 5 });
    assert.ok(all.events.length <= 5);
    const ids = all.events.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    if (!local) {
      const created = await client.call(auditList, { event: 'user.created' });
      assert.deepEqual(created.events.map((e) => e.target).sort(), ['admin', 'erin']);
    }
    await rpcError(client.call(auditList, { since: 'yesterday' }), -32602, 'ValidationError');
  });
}
