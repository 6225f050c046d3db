/**
 * Contract cases of sync (`_cleveragents/sync/*`): it runs in a local agent (memory and stdio here,
 * the local user), which is not connected, so it says how to connect; a server (HTTP here) refuses
 * every sync method as unsupported, saying where sync runs. Connecting checks the server first:
 * one that cannot be reached is refused and nothing is stored.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  A2AClientError,
  syncConnect,
  syncConnection,
  syncDisconnect,
  syncPull,
  syncPush,
  syncStatus,
} from '../../src/protocol/client/index.ts';
import type { SuiteContext } from './suite-context.ts';

async function reasonOf(p: Promise<unknown>): Promise<{ reason: string | undefined; message: string; hint?: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof A2AClientError, `expected an A2AClientError, got ${String(err)}`);
    return { reason: err.reason, message: err.message, ...(err.hint ? { hint: err.hint } : {}) };
  }
  assert.fail('expected an error');
}

export function syncSuite(ctx: SuiteContext): void {
  const local = ctx.transport !== 'http';

  it(
    local ? 'a local agent not connected says how to connect' : 'a server refuses sync: it runs in a local setup',
    async () => {
      const c = ctx.harness().client;
      if (!local) {
        // One call at a time: a refusal must not arrive before anyone awaits it.
        for (const call of [
          () => c.call(syncConnection, {}),
          () => c.call(syncStatus, {}),
          () => c.call(syncPull, {}),
          () => c.call(syncPush, {}),
          () => c.call(syncDisconnect, {}),
          () => c.call(syncConnect, { url: 'http://127.0.0.1:1', token: 'k' }),
        ]) {
          const e = await reasonOf(call());
          assert.equal(e.reason, 'UNSUPPORTED_OPERATION', e.message);
          assert.match(e.message, /sync runs in a local setup/);
          assert.match(e.hint ?? '', /agents server connect URL/);
        }
        return;
      }
      assert.deepEqual(await c.call(syncConnection, {}), { connected: false });
      for (const call of [
        () => c.call(syncStatus, {}),
        () => c.call(syncPull, { dryRun: true }),
        () => c.call(syncPush, { force: false }),
      ]) {
        const e = await reasonOf(call());
        assert.equal(e.reason, 'INVALID_STATE', e.message);
        assert.match(e.hint ?? '', /agents server connect URL/);
      }
      assert.deepEqual(await c.call(syncDisconnect, {}), { disconnected: false });
    },
  );

  it('connect refuses a bad URL (params) and, locally, a server it cannot reach, storing nothing', async () => {
    const c = ctx.harness().client;
    const bad = await reasonOf(c.call(syncConnect, { url: 'ftp://x', token: 'k' }));
    assert.equal(bad.reason, 'INVALID_PARAMS');
    if (!local) return;
    const e = await reasonOf(c.call(syncConnect, { url: 'http://127.0.0.1:1', token: 'k', autoPullSeconds: 0 }));
    assert.equal(e.reason, 'UNAVAILABLE', e.message);
    assert.match(e.message, /Cannot reach the server at http:\/\/127\.0\.0\.1:1/);
    assert.deepEqual(await c.call(syncConnection, {}), { connected: false });
  });

  it('push and pull refuse local/: it never leaves the machine', async () => {
    const c = ctx.harness().client;
    const e = await reasonOf(c.call(syncPush, { namespaces: ['local'] }));
    assert.equal(e.reason, local ? 'INVALID_PARAMS' : 'UNSUPPORTED_OPERATION', e.message);
    if (local) assert.match(e.message, /local\/ never leaves this machine/);
  });
}
