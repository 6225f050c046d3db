/** Runner leases (the `runners` table) on every storage engine. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../../../src/application/index.ts';
import { SqliteRunnerRegistry } from '../../../../src/infrastructure/index.ts';
import { PgRunnerRegistry } from '../../../../src/infrastructure/persistence/postgres/pg-runner.registry.ts';
import type { RunnerLeases, RunnerRegistryOptions } from '../../../../src/infrastructure/persistence/runner-leases.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';

function registryOf(opened: OpenedEngine, opts: RunnerRegistryOptions): SqliteRunnerRegistry | PgRunnerRegistry {
  if (opened.pg) return new PgRunnerRegistry(opened.pg, opts);
  if (!opened.sqlite) throw new Error('no database');
  return new SqliteRunnerRegistry(opened.sqlite, opts);
}

/** Makes `r` pause between reading the leases and pruning them (while another runner renews). */
function pauseWhilePruning(r: RunnerLeases, pause: () => Promise<void>): void {
  const list = (r as unknown as { listLeases: () => Promise<unknown[]> }).listLeases.bind(r);
  Object.assign(r, {
    listLeases: async () => {
      const rows = await list();
      await pause();
      return rows;
    },
  });
}

for (const engine of ENGINES) {
  describe(`runner registry on ${engine.name}`, { skip: engine.skip() }, () => {
    let opened: OpenedEngine;
    let now: number;
    const clock = () => now;
    const registry = (id: string, extra: Partial<RunnerRegistryOptions> = {}) =>
      registryOf(opened, { id, logger: silentLogger, leaseMs: 10_000, now: clock, ...extra });
    const ids = async () =>
      (
        await (opened.pg?.kysely ?? opened.sqlite!.kysely).selectFrom('runners').select('id').orderBy('id').execute()
      ).map((r) => r.id);

    beforeEach(async () => {
      opened = await engine.open();
      now = Date.parse('2026-03-01T10:00:00.000Z');
    });
    afterEach(() => opened.close());

    it('tells a live runner from one whose process is gone or whose lease expired', async () => {
      const me = registry('me');
      const other = registry('other', { pid: process.ppid });
      const dead = registry('dead', { pid: 2 ** 22 + 12345 });
      const remote = registry('remote', { host: 'elsewhere' });
      for (const r of [me, other, dead, remote]) await r.start();
      try {
        assert.equal(await me.isLive('me'), true);
        assert.equal(await me.isLive('other'), true, 'another live process on this host');
        assert.equal(await me.isLive('dead'), false, 'its pid no longer exists');
        assert.equal(await me.isLive('remote'), true, 'another host: the lease decides');
        assert.equal(await me.isLive('never-registered'), false);
        assert.equal(await me.isLive(null), false);
        assert.equal(await me.prune(), 1, 'only the runner whose pid is gone is dead yet');
        now += 20_000;
        assert.equal(await me.isLive('remote'), false, 'an expired lease');
        assert.equal(await me.prune(), 2, 'other and remote have stale leases now');
        assert.deepEqual(await ids(), ['me'], 'a runner never prunes itself');
      } finally {
        for (const r of [me, other, dead, remote]) await r.stop();
      }
    });

    it('a renewal keeps the lease alive, and takes back a row that was pruned', async () => {
      const me = registry('me', { host: 'here' });
      const peer = registry('peer', { host: 'there' });
      await me.start();
      await peer.start();
      try {
        now += 6_000;
        await me.renew();
        now += 6_000;
        assert.equal(await peer.isLive('me'), true, 'renewed 6 s ago: not yet expired (3/4 of the lease)');
        now += 20_000;
        assert.equal(await peer.prune(), 1, 'me paused past its lease and was pruned');
        assert.deepEqual(await ids(), ['peer']);
        await me.renew();
        assert.deepEqual(await ids(), ['me', 'peer'], 'the renewal inserted the row again');
        assert.equal(await peer.isLive('me'), true);
      } finally {
        await me.stop();
        await peer.stop();
      }
    });

    it("settles a dead runner's work within the lease, and never takes a runner that renews on time for dead", async () => {
      // The sweeps of a peer (at its own phase) against a runner that renews on its timer and
      // dies right after a renewal — the worst case — all on the registry's own timings.
      const me = registry('me', { host: 'here' });
      const peer = registry('peer', { host: 'there' });
      const { leaseMs, renewEveryMs, sweepEveryMs } = me;
      const t0 = now;
      await me.start();
      await peer.start();
      try {
        let worst = 0;
        for (const phase of [0, 0.25, 0.5, 0.75, 0.99].map((f) => Math.floor(f * sweepEveryMs))) {
          now = t0;
          await me.renew();
          let next = t0 + renewEveryMs;
          let sweep = t0 + phase;
          // Alive for a while: every sweep finds it live.
          for (; sweep < t0 + 3 * leaseMs; sweep += sweepEveryMs) {
            for (; next <= sweep; next += renewEveryMs) {
              now = next;
              await me.renew();
            }
            now = sweep;
            assert.equal(
              await peer.isLive('me'),
              true,
              `renewing every ${renewEveryMs} ms, seen live at ${sweep - t0}`,
            );
          }
          const died = next - renewEveryMs;
          for (; ; sweep += sweepEveryMs) {
            now = sweep;
            if (!(await peer.isLive('me'))) break;
          }
          worst = Math.max(worst, sweep - died);
        }
        assert.ok(worst <= leaseMs, `settled ${worst} ms after the death; the lease is ${leaseMs} ms`);
      } finally {
        await me.stop();
        await peer.stop();
      }
    });

    it('a prune keeps a lease renewed after it was judged dead', async () => {
      const me = registry('me', { host: 'here' });
      const peer = registry('peer', { host: 'there' });
      await me.start();
      await peer.start();
      try {
        now += 20_000;
        pauseWhilePruning(peer, () => me.renew());
        assert.equal(await peer.prune(), 0, 'me renewed between the read and the delete');
        assert.deepEqual(await ids(), ['me', 'peer']);
      } finally {
        await me.stop();
        await peer.stop();
      }
    });

    it('stop gives the lease up: the row is gone and the runner is dead to others', async () => {
      const me = registry('me', { host: 'here' });
      const peer = registry('peer', { host: 'there' });
      await me.start();
      await peer.start();
      await me.stop();
      assert.equal(await me.isLive('me'), false);
      assert.equal(await peer.isLive('me'), false);
      assert.deepEqual(await ids(), ['peer']);
      await peer.stop();
      assert.deepEqual(await ids(), []);
    });
  });
}
