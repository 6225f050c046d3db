import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, SqliteDialect } from 'kysely';
import {
  createMigrator,
  migrationStatus,
  MIGRATIONS,
  openDatabase,
  param,
  SqliteSessionRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';

const session = (id: string) => ({
  id,
  owner: 'alice',
  actor: 'builtin/echo',
  createdAt: '2026-03-01T10:00:00.000Z',
  updatedAt: '2026-03-01T10:00:00.000Z',
  taskCount: 0,
});

describe('openDatabase', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-db-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates a private directory and file, in WAL mode with the expected pragmas', async () => {
    const file = path.join(dir, 'nested', 'state', 'agents.db');
    const db = await openDatabase({ file });
    try {
      if (process.platform !== 'win32') {
        assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700 & ~process.umask());
        assert.equal(fs.statSync(file).mode & 0o077, 0);
      }
      assert.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 1);
      assert.equal(db.sqlite.pragma('busy_timeout', { simple: true }), 5000);
      assert.deepEqual(await migrationStatus(db.kysely), { applied: Object.keys(MIGRATIONS), pending: [] });
    } finally {
      await db.close();
    }
  });

  it('keeps data across close and reopen, and migrates only once', async () => {
    const file = path.join(dir, 'agents.db');
    const first = await openDatabase({ file });
    await new SqliteSessionRepository(first).create(session('s1'));
    await first.close();
    await first.close(); // a second close is harmless

    const second = await openDatabase({ file });
    try {
      assert.deepEqual(await new SqliteSessionRepository(second).get('s1'), session('s1'));
      const applied = await second.kysely
        .selectFrom('kysely_migration' as never)
        .selectAll()
        .execute();
      assert.equal(applied.length, Object.keys(MIGRATIONS).length);
    } finally {
      await second.close();
    }
  });

  it('opens a database it already migrated without waiting for a writer, and migrates an older one', async () => {
    const file = path.join(dir, 'agents.db');
    const first = await openDatabase({ file });
    // Another connection is in the middle of a write: a reopen that took the write lock would fail.
    first.sqlite.exec('BEGIN IMMEDIATE');
    const second = await openDatabase({ file, busyTimeoutMs: 0 });
    first.sqlite.exec('ROLLBACK');
    await second.close();
    await first.close();

    // A file an older version wrote (every migration but the last) gets the last one on open.
    const older = path.join(dir, 'older.db');
    const raw = new Kysely({ dialect: new SqliteDialect({ database: new BetterSqlite3(older) }) });
    const names = Object.keys(MIGRATIONS).sort();
    const { error } = await createMigrator(raw).migrateTo(names[names.length - 2]!);
    assert.equal(error, undefined);
    await raw.destroy();
    const upgraded = await openDatabase({ file: older });
    try {
      assert.deepEqual(await migrationStatus(upgraded.kysely), { applied: names, pending: [] });
    } finally {
      await upgraded.close();
    }
  });

  it('refuses a database written by a newer version', async () => {
    const file = path.join(dir, 'agents.db');
    const db = await openDatabase({ file });
    db.sqlite
      .prepare('insert into kysely_migration (name, timestamp) values (?, ?)')
      .run('0999_future', new Date().toISOString());
    await db.close();
    await assert.rejects(openDatabase({ file }), /0999_future.*newer version/);
  });

  it('works in memory', async () => {
    const db = await openDatabase({ file: ':memory:' });
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db.kysely);
    assert.deepEqual(rows, [{ one: 1 }]);
    await db.close();
    assert.equal(db.sqlite.open, false);
  });
});

describe('SqliteDatabase', () => {
  let db: SqliteDatabase;
  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
  });
  afterEach(() => db.close());

  it('runs work left for the end of a group in its transaction, and drops it with a group that fails', async () => {
    const sessions = new SqliteSessionRepository(db);
    const ran: string[] = [];
    const hook = (name: string, fail = false) => ({
      run: () => {
        ran.push(name);
        if (fail) throw new Error(`${name} failed`);
      },
      discard: () => ran.push(`${name} discarded`),
    });
    assert.throws(() => db.atGroupEnd(hook('outside')), /outside a group commit/);
    const failing = [
      sessions.create(session('a')),
      db.write(() => db.atGroupEnd(hook('first', true))),
      db.write(() => db.atGroupEnd(hook('second'))),
    ];
    for (const w of failing) await assert.rejects(w, /first failed/);
    assert.deepEqual(ran, ['first', 'first discarded', 'second discarded']);
    assert.equal(await sessions.get('a'), undefined, 'the whole group was rolled back');
    await Promise.all([sessions.create(session('b')), db.write(() => db.atGroupEnd(hook('third')))]);
    assert.deepEqual(ran, ['first', 'first discarded', 'second discarded', 'third']);
    assert.deepEqual(await sessions.get('b'), session('b'));
  });

  it('runs prepared statements with named parameters, repeated names included', async () => {
    const stmt = db.prepare(
      db.kysely
        .selectFrom('sessions')
        .select('id')
        .where((eb) => eb.or([eb('id', '=', param<string>('id')), eb('owner', '=', param<string>('id'))])),
    );
    await new SqliteSessionRepository(db).create(session('s1'));
    assert.deepEqual(stmt.all({ id: 's1' }), [{ id: 's1' }]);
    assert.deepEqual(stmt.all({ id: 'alice' }), [{ id: 's1' }]);
    assert.throws(() => stmt.all({}), /missing value for parameter id/);
  });

  it('refuses to prepare a query with a literal bound value', () => {
    assert.throws(
      () => db.prepare(db.kysely.selectFrom('sessions').select('id').where('id', '=', 's1')),
      /binds a literal value/,
    );
  });

  it('keeps repository writes out of a Kysely transaction that is still open', async () => {
    const sessions = new SqliteSessionRepository(db);
    let release!: () => void;
    let opened!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const inside = new Promise<void>((r) => (opened = r));
    const trx = db.kysely.transaction().execute(async (t) => {
      await t
        .insertInto('sessions')
        .values({ ...toRow(session('in-trx')) })
        .execute();
      opened();
      await held;
      throw new Error('roll back');
    });
    await inside;
    // Issued while the transaction is open; must neither join it nor be lost with its rollback.
    const write = sessions.create(session('outside'));
    await new Promise((r) => setImmediate(r));
    release();
    await assert.rejects(trx, /roll back/);
    await write;
    assert.equal(await sessions.get('in-trx'), undefined);
    assert.deepEqual(await sessions.get('outside'), session('outside'));
  });
});

function toRow(s: ReturnType<typeof session>) {
  return {
    id: s.id,
    owner: s.owner,
    actor: s.actor,
    title: null,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    task_count: s.taskCount,
  };
}
