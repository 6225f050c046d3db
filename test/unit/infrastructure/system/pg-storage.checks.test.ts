/** The storage part of `agents diagnostics` on PostgreSQL. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../../../src/application/index.ts';
import { PgRunnerRegistry } from '../../../../src/infrastructure/persistence/postgres/pg-runner.registry.ts';
import {
  instancesStatus,
  pgStorageChecks,
  poolStatus,
  postgresVersionStatus,
} from '../../../../src/infrastructure/system/pg-storage.checks.ts';
import { POSTGRES, type OpenedEngine } from '../../../support/engines.ts';

describe('PostgreSQL storage checks', { skip: POSTGRES.skip() }, () => {
  let opened: OpenedEngine;
  before(async () => {
    opened = await POSTGRES.open();
  });
  after(() => opened.close());

  it('reports every check, all ok, on a fresh database; the URL without its password', async () => {
    const checks = await pgStorageChecks(opened.pg!);
    assert.deepEqual(
      checks.map((c) => [c.name, c.category, c.status]),
      [
        ['database reachable', 'storage', 'ok'],
        ['postgresql version', 'versions', 'ok'],
        ['schema migrations', 'storage', 'ok'],
        ['connection pool', 'storage', 'ok'],
        ['database size', 'storage', 'ok'],
        ['instances', 'storage', 'ok'],
      ],
      JSON.stringify(checks),
    );
    const detail = (name: string) => checks.find((c) => c.name === name)?.detail ?? '';
    assert.equal(detail('database reachable'), `PostgreSQL ${opened.pg!.displayUrl}`);
    assert.match(detail('postgresql version'), /^PostgreSQL \d+/);
    assert.match(detail('schema migrations'), /applied, latest /);
    assert.match(detail('database size'), /^\d+(\.\d)? (B|KiB|MiB|GiB)$/);
    assert.equal(detail('instances'), 'no instance holds a live lease on this database');
  });

  it('reports the pool as the pool stats say', async () => {
    const stats = opened.pg!.poolStats();
    const pool = (await pgStorageChecks(opened.pg!)).find((c) => c.name === 'connection pool');
    assert.ok(stats.size >= 1 && stats.max === 10, JSON.stringify(stats));
    // The checks ran one query at a time: every open connection is idle again, nobody waits.
    assert.equal(pool?.detail, `${stats.size} of 10 connections open, ${stats.size} idle, 0 waiting`);
  });

  it('counts the instances with a live lease, by host', async () => {
    const now = Date.now();
    const runners = ['a', 'b', 'c'].map(
      (id, i) =>
        new PgRunnerRegistry(opened.pg!, {
          id,
          logger: silentLogger,
          host: i < 2 ? 'web-1' : 'web-2',
          pid: 1,
          leaseMs: 10_000,
          now: () => now,
        }),
    );
    const stale = new PgRunnerRegistry(opened.pg!, { id: 'old', logger: silentLogger, host: 'web-3', now: () => 0 });
    for (const r of [...runners, stale]) await r.start();
    try {
      const checks = await pgStorageChecks(opened.pg!, { leaseMs: 10_000, now: () => now });
      assert.equal(
        checks.find((c) => c.name === 'instances')?.detail,
        '3 instances share this database: web-1 (2), web-2',
      );
    } finally {
      for (const r of [...runners, stale]) await r.stop();
    }
  });
});

describe('PostgreSQL storage checks of an unreachable database', { skip: POSTGRES.skip() }, () => {
  it('report failures instead of throwing', async () => {
    const gone = await POSTGRES.open();
    await gone.pg!.close();
    try {
      const checks = await pgStorageChecks(gone.pg!);
      assert.equal(checks.find((c) => c.name === 'database reachable')?.status, 'fail');
      assert.equal(checks.find((c) => c.name === 'instances')?.status, 'fail');
      assert.equal(checks.length, 6, 'every check still reports');
    } finally {
      await gone.close();
    }
  });
});

describe('PostgreSQL check rules', () => {
  it('warns about a server older than PostgreSQL 13', () => {
    assert.equal(postgresVersionStatus('PostgreSQL 12.19').status, 'warn');
    assert.equal(postgresVersionStatus('PostgreSQL 13.0').status, 'ok');
    assert.equal(postgresVersionStatus('PostgreSQL 16.4 (Debian 16.4-1)').status, 'ok');
  });

  it('warns when callers wait for a connection', () => {
    assert.deepEqual(poolStatus({ size: 3, max: 10, idle: 2, waiting: 0 }), {
      status: 'ok',
      detail: '3 of 10 connections open, 2 idle, 0 waiting',
    });
    const busy = poolStatus({ size: 10, max: 10, idle: 0, waiting: 4 });
    assert.equal(busy.status, 'warn');
    assert.equal(busy.detail, '10 of 10 connections open, 0 idle, 4 waiting');
    assert.match(busy.hint ?? '', /CLEVERAGENTS_DATABASE_POOL/);
  });

  it('one live instance, expired leases not counted', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const rows = [
      { pid: 1, host: 'h', heartbeat_at: at(95_000) },
      { pid: 2, host: 'h', heartbeat_at: at(10_000) },
    ];
    assert.equal(instancesStatus(rows, 100_000, 10_000).detail, '1 instance shares this database: h');
  });
});
