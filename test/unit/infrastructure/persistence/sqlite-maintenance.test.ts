import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import {
  backupSqlite,
  checkSqliteBackup,
  openDatabase,
  restoreSqlite,
  sqliteLiveRunners,
} from '../../../../src/infrastructure/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ca-sqlite-maintenance-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A migrated database with the given runner rows. */
async function database(runners: Array<{ pid: number; host: string; heartbeatAt: string }> = []): Promise<string> {
  const file = join(dir, `db-${n++}.db`);
  await (await openDatabase({ file })).close();
  const db = new BetterSqlite3(file);
  for (const [i, r] of runners.entries())
    db.prepare('insert into runners (id, pid, host, started_at, heartbeat_at) values (?, ?, ?, ?, ?)').run(
      `r${i}`,
      r.pid,
      r.host,
      r.heartbeatAt,
      r.heartbeatAt,
    );
  db.close();
  return file;
}

describe('SQLite maintenance', () => {
  it('counts as live a process of this host that exists and a fresh lease elsewhere; not itself, a dead pid or a stale lease', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const at = (msAgo: number): string => new Date(now - msAgo).toISOString();
    const file = await database([
      { pid: process.ppid, host: hostname(), heartbeatAt: at(60_000) },
      { pid: process.pid, host: hostname(), heartbeatAt: at(0) },
      { pid: 2 ** 22 + 7, host: hostname(), heartbeatAt: at(0) },
      { pid: 1, host: 'other-host', heartbeatAt: at(1_000) },
      { pid: 1, host: 'stale-host', heartbeatAt: at(60_000) },
    ]);
    assert.deepEqual(sqliteLiveRunners(file, 15_000, now), [
      { pid: process.ppid, host: hostname() },
      { pid: 1, host: 'other-host' },
    ]);
    assert.deepEqual(sqliteLiveRunners(join(dir, 'absent.db'), 15_000, now), []);
  });

  it('refuses a backup of a newer version, a foreign database and a file that is not SQLite', async () => {
    const newer = await database();
    const db = new BetterSqlite3(newer);
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0999_future', 'x');
    db.close();
    assert.throws(
      () => checkSqliteBackup(newer),
      /written by a newer version of CleverAgents \(migrations 0999_future\)/,
    );
    const foreign = join(dir, 'foreign.db');
    new BetterSqlite3(foreign).exec('create table t (x)');
    assert.throws(() => checkSqliteBackup(foreign), /is not a CleverAgents database/);
    const text = join(dir, 'text.db');
    writeFileSync(text, 'not a database at all, just some text that is long enough to be read as a header');
    assert.throws(() => checkSqliteBackup(text), /not a readable SQLite database|cannot be opened/);
  });

  it('replaces the database in place: the old one kept, its WAL not replayed onto the new one', async () => {
    const source = await database();
    const src = new BetterSqlite3(source);
    src.exec("create table marker (v text); insert into marker values ('from-backup')");
    src.close();
    const backup = join(dir, 'backup.db');
    await backupSqlite(source, backup);
    const live = await database();
    // The target's last writes are only in its WAL: its server was killed before a checkpoint.
    const killed = spawnSync(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(live)}); db.pragma('wal_autocheckpoint = 0');
         db.exec("create table marker (v text); insert into marker values ('old')"); process.kill(process.pid, 'SIGKILL');`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    assert.ok(statSync(`${live}-wal`).size > 0, 'the writes are in the WAL');
    const { previous } = await restoreSqlite(backup, live);
    const after = new BetterSqlite3(live, { readonly: true });
    assert.deepEqual(after.prepare('select v from marker').all(), [{ v: 'from-backup' }]);
    after.close();
    // The replaced database, with what its WAL held.
    assert.ok(previous && existsSync(previous));
    const old = new BetterSqlite3(previous, { readonly: true });
    assert.deepEqual(old.prepare('select v from marker').all(), [{ v: 'old' }]);
    old.close();
  });
});
