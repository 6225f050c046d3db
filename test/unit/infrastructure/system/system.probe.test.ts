import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DiagnosticCheck } from '../../../../src/application/index.ts';
import {
  MIGRATIONS,
  HostSystemProbe,
  openDatabase,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';
import { diskStatus, nodeVersion, sqliteStorageChecks } from '../../../../src/infrastructure/system/system.probe.ts';

/** The probe of an embedded deployment: SQLite storage checks plus the host's. */
function sqliteProbe(o: { db: SqliteDatabase; dataDir: string; dbFile: string; version: string; tokenFile?: string }) {
  const storage = {
    ping: async () => {
      o.db.sqlite.prepare('select 1').get();
    },
    checks: () => sqliteStorageChecks(o.db, o.dbFile),
  };
  return new HostSystemProbe({ storage, dataDir: o.dataDir, version: o.version, tokenFile: o.tokenFile });
}

const byName = (checks: DiagnosticCheck[], name: string): DiagnosticCheck => {
  const c = checks.find((x) => x.name === name);
  assert.ok(c, `no check named ${name} in ${checks.map((x) => x.name).join(', ')}`);
  return c;
};

describe('HostSystemProbe over SQLite', () => {
  let dir: string;
  let file: string;
  let db: SqliteDatabase;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-probe-'));
    file = path.join(dir, 'agents.db');
    db = await openDatabase({ file });
  });
  afterEach(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reports healthy storage, versions and configuration for a fresh data directory', async () => {
    const probe = sqliteProbe({ db, dataDir: dir, dbFile: file, version: '1.2.3' });
    await probe.ping();
    const checks = await probe.checks();
    assert.deepEqual(new Set(checks.map((c) => c.category)), new Set(['storage', 'disk', 'versions', 'configuration']));
    for (const name of [
      'database reachable',
      'database integrity',
      'journal mode',
      'schema migrations',
      'database size',
      'node version',
      'sqlite version',
      'data directory',
    ]) {
      assert.equal(byName(checks, name).status, 'ok', `${name}: ${byName(checks, name).detail}`);
    }
    assert.match(byName(checks, 'schema migrations').detail, new RegExp(Object.keys(MIGRATIONS).at(-1) ?? '0001'));
    assert.match(byName(checks, 'sqlite version').detail, /^SQLite 3\.\d+/);
    assert.equal(byName(checks, 'cleveragents version').detail, '1.2.3');
    assert.match(byName(checks, 'free disk space').detail, /free at/);
    assert.equal(
      checks.some((c) => c.name === 'token file'),
      false,
    );
  });

  it('fails the data directory check when the directory is missing', async () => {
    const missing = path.join(dir, 'nope');
    const checks = await sqliteProbe({ db, dataDir: missing, dbFile: file, version: '1' }).checks();
    assert.equal(byName(checks, 'data directory').status, 'fail');
    assert.equal(byName(checks, 'free disk space').status, 'fail');
  });

  it(
    'warns about a token file others can read, with the chmod hint',
    { skip: process.platform === 'win32' },
    async () => {
      const token = path.join(dir, 'token');
      fs.writeFileSync(token, 'secret', { mode: 0o644 });
      fs.chmodSync(token, 0o644);
      const probe = sqliteProbe({ db, dataDir: dir, dbFile: file, version: '1', tokenFile: token });
      const open = byName(await probe.checks(), 'token file');
      assert.equal(open.status, 'warn');
      assert.equal(open.hint, `chmod 600 ${token}`);
      fs.chmodSync(token, 0o600);
      assert.equal(byName(await probe.checks(), 'token file').status, 'ok');
    },
  );

  it('warns about a configured token file that does not exist', async () => {
    const token = path.join(dir, 'absent');
    const c = byName(
      await sqliteProbe({ db, dataDir: dir, dbFile: file, version: '1', tokenFile: token }).checks(),
      'token file',
    );
    assert.equal(c.status, 'warn');
    assert.match(c.hint ?? '', /chmod 600/);
  });

  it('fails storage checks instead of throwing once the database is closed', async () => {
    const probe = sqliteProbe({ db, dataDir: dir, dbFile: file, version: '1' });
    await db.close();
    await assert.rejects(probe.ping());
    const checks = await probe.checks();
    assert.equal(byName(checks, 'database reachable').status, 'fail');
    assert.equal(byName(checks, 'data directory').status, 'ok');
  });

  it('reports an in-memory database without failing its file checks', async () => {
    const mem = await openDatabase({ file: ':memory:' });
    try {
      const checks = await sqliteProbe({ db: mem, dataDir: dir, dbFile: ':memory:', version: '1' }).checks();
      assert.deepEqual(
        checks.filter((c) => c.category === 'storage' && c.status !== 'ok'),
        [],
      );
    } finally {
      await mem.close();
    }
  });
});

describe('probe thresholds', () => {
  it('classifies free disk space: fail under 100 MiB, warn under 1 GiB', () => {
    assert.equal(diskStatus(50 * 1024 ** 2, '/d').status, 'fail');
    assert.equal(diskStatus(100 * 1024 ** 2, '/d').status, 'warn');
    assert.equal(diskStatus(1024 ** 3 - 1, '/d').status, 'warn');
    assert.equal(diskStatus(1024 ** 3, '/d').status, 'ok');
    assert.equal(diskStatus(5 * 1024 ** 3, '/d').detail, '5.0 GiB free at /d');
  });

  it('requires Node.js 20 or later', () => {
    assert.equal(nodeVersion('18.19.0').status, 'fail');
    assert.equal(nodeVersion('20.0.0').status, 'ok');
    assert.equal(nodeVersion('22.3.1').status, 'ok');
  });
});
