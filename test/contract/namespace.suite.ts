/**
 * Contract cases of namespace management (extension 1.3), over every transport: create, and the
 * refusals that do not depend on how the transport authenticates (local mode: no other users;
 * `local` is never deleted and keeps its last owner).
 */
import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import {
  A2AClient,
  A2AClientError,
  namespaceAddMember,
  namespaceCreate,
  namespaceDelete,
  namespaceGrant,
  namespaceGrants,
  namespaceLimitsGet,
  namespaceLimitsSet,
  namespaceRevoke,
  namespaceRemoveMember,
  namespaceSetRole,
} from '../../src/protocol/client/index.ts';
import type { SuiteContext } from './suite-context.ts';

async function refused(p: Promise<unknown>, type: string, message: RegExp): Promise<{ type: string; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof A2AClientError, `expected an A2AClientError, got ${String(err)}`);
    assert.equal(err.type, type, `type (${err.message})`);
    assert.match(err.message, message);
    return { type: err.type, message: err.message };
  }
  assert.fail(`expected ${type}`);
}

export function namespaceSuite(ctx: SuiteContext): void {
  let client: A2AClient;
  before(() => {
    client = ctx.harness().client;
  });

  it('creates a namespace owned by the caller; refuses one taken or reserved', async () => {
    const created = await client.call(namespaceCreate, { name: 'contract-team' });
    // The caller owns it: the local user, or over HTTP the server token's user, the administrator.
    const me = ctx.harness().name === 'http' ? 'admin' : 'local';
    assert.deepEqual(
      [created.name, created.owner, created.role, created.builtin],
      ['contract-team', me, 'owner', false],
    );
    const taken = await refused(
      client.call(namespaceCreate, { name: 'contract-team' }),
      'DuplicateEntityError',
      /Namespace contract-team already exists/,
    );
    const reserved = await refused(client.call(namespaceCreate, { name: 'root' }), 'ValidationError', /reserved/);
    await refused(client.call(namespaceCreate, { name: 'Bad Name' }), 'ValidationError', /name/);
    ctx.record('namespace create', { role: created.role, taken, reserved });
  });

  it('never deletes local; local mode adds no members and keeps the last owner', async () => {
    const local = await refused(
      client.call(namespaceDelete, { name: 'local', force: true }),
      'AuthorizationError',
      /Namespace local cannot be deleted/,
    );
    if (ctx.harness().name === 'http') {
      // A server has users (and local/ has two owners there: local and admin): bob must exist.
      await refused(
        client.call(namespaceAddMember, { namespace: 'local', user: 'bob', role: 'member' }),
        'ResourceNotFoundError',
        /bob/,
      );
      await refused(
        client.call(namespaceSetRole, { namespace: 'local', user: 'nobody', role: 'viewer' }),
        'ResourceNotFoundError',
        /nobody is not a member of local/,
      );
      await refused(
        client.call(namespaceRemoveMember, { namespace: 'local', user: 'nobody' }),
        'ResourceNotFoundError',
        /nobody/,
      );
    } else {
      await refused(
        client.call(namespaceAddMember, { namespace: 'local', user: 'bob', role: 'member' }),
        'UnsupportedOperationError',
        /local mode has no other users/,
      );
      await refused(
        client.call(namespaceSetRole, { namespace: 'local', user: 'local', role: 'viewer' }),
        'BusinessRuleViolation',
        /local is the last owner of local and cannot be demoted/,
      );
      await refused(
        client.call(namespaceRemoveMember, { namespace: 'local', user: 'local' }),
        'BusinessRuleViolation',
        /cannot be removed/,
      );
      await refused(
        client.call(namespaceSetRole, { namespace: 'local', user: 'nobody', role: 'viewer' }),
        'ResourceNotFoundError',
        /nobody is not a member of local/,
      );
    }
    // A namespace the caller is not in is not found, exactly as a missing one.
    const missing = await refused(
      client.call(namespaceDelete, { name: 'nowhere' }),
      'ResourceNotFoundError',
      /^Namespace nowhere was not found$/,
    );
    ctx.record('namespace refusals', { local, missing });
  });

  it("answers a namespace's capabilities; a grant is a server administrator's, refused in local mode", async () => {
    // local/ holds every capability in local mode and on a server (the administrator's own).
    const local = await client.call(namespaceGrants, { namespace: 'local' });
    assert.deepEqual(
      local.grants.map((g) => g.capability),
      ['runs-program', 'host-path', 'server-secret', 'private-network'],
    );
    const missing = await refused(
      client.call(namespaceGrants, { namespace: 'nowhere' }),
      'ResourceNotFoundError',
      /^Namespace nowhere was not found$/,
    );
    if (ctx.transport === 'http') {
      await client.call(namespaceCreate, { name: 'contract-grants' });
      const g = await client.call(namespaceGrant, {
        namespace: 'contract-grants',
        capability: 'host-path',
        paths: ['/srv/x'],
      });
      assert.deepEqual([g.capability, g.paths, g.grantedBy], ['host-path', ['/srv/x'], 'admin']);
      const listed = await client.call(namespaceGrants, { namespace: 'contract-grants' });
      assert.deepEqual(
        listed.grants.map((x) => x.capability),
        ['host-path'],
      );
      const r = await client.call(namespaceRevoke, { namespace: 'contract-grants', capability: 'host-path' });
      assert.equal(r.revoked, true);
      await refused(
        client.call(namespaceGrant, { namespace: 'contract-grants', capability: 'runs-program', paths: ['/x'] }),
        'ValidationError',
        /--paths applies to host-path only/,
      );
      await client.call(namespaceDelete, { name: 'contract-grants' });
    } else {
      await refused(
        client.call(namespaceGrant, { namespace: 'local', capability: 'runs-program' }),
        'UnsupportedOperationError',
        /local mode holds every one/,
      );
      await refused(
        client.call(namespaceRevoke, { namespace: 'local', capability: 'runs-program' }),
        'UnsupportedOperationError',
        /local mode holds every one/,
      );
    }
    ctx.record('namespace grants', { local: local.grants.map((g) => g.capability), missing });
  });

  it("answers a namespace's per-user limits; an override is a server administrator's, refused in local mode", async () => {
    const none = { requestsPerMinute: 0, concurrentTurns: 0, tokensPerDay: 0 };
    const local = await client.call(namespaceLimitsGet, { namespace: 'local' });
    assert.deepEqual([local.limits, local.defaults, local.overrides], [none, none, {}]);
    const missing = await refused(
      client.call(namespaceLimitsGet, { namespace: 'nowhere' }),
      'ResourceNotFoundError',
      /^Namespace nowhere was not found$/,
    );
    if (ctx.transport === 'http') {
      await client.call(namespaceCreate, { name: 'contract-limits' });
      const set = await client.call(namespaceLimitsSet, { namespace: 'contract-limits', concurrentTurns: 3 });
      assert.deepEqual(
        [set.limits.concurrentTurns, set.overrides, set.updatedBy],
        [3, { concurrentTurns: 3 }, 'admin'],
      );
      const back = await client.call(namespaceLimitsSet, { namespace: 'contract-limits', concurrentTurns: null });
      assert.deepEqual([back.limits, back.overrides], [none, {}]);
      // Overrides go with their namespace: one made again under the name starts with none.
      await client.call(namespaceLimitsSet, { namespace: 'contract-limits', tokensPerDay: 7 });
      await client.call(namespaceDelete, { name: 'contract-limits' });
      await client.call(namespaceCreate, { name: 'contract-limits' });
      assert.deepEqual((await client.call(namespaceLimitsGet, { namespace: 'contract-limits' })).overrides, {});
      await client.call(namespaceDelete, { name: 'contract-limits' });
    } else {
      await refused(
        client.call(namespaceLimitsSet, { namespace: 'local', tokensPerDay: 10 }),
        'UnsupportedOperationError',
        /^Limits apply on a server: local mode has one user, never limited$/,
      );
    }
    ctx.record('namespace limits', { local: local.limits, missing });
  });
}
