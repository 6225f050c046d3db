/** Storage failures reach callers as one clear UNAVAILABLE error each, logged once, and never wedge the group commit. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { AppError } from '../../../../src/domain/errors.ts';
import type { Logger } from '../../../../src/application/index.ts';
import { openDatabase, SqliteSessionRepository, type SqliteDatabase } from '../../../../src/infrastructure/index.ts';

const session = (id: string) => ({
  id,
  owner: 'alice',
  actor: 'builtin/echo',
  createdAt: '2026-03-01T10:00:00.000Z',
  updatedAt: '2026-03-01T10:00:00.000Z',
  taskCount: 0,
});

describe('storage failures', () => {
  let dir: string;
  let db: SqliteDatabase;
  const logged: Array<{ obj: any; msg?: string | undefined }> = [];
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (obj, msg) => void logged.push({ obj, msg }) };
  beforeEach(async () => {
    logged.length = 0;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-fail-'));
    db = await openDatabase({ file: path.join(dir, 'agents.db'), logger, busyTimeoutMs: 0 });
  });
  afterEach(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fails every write of a group the lock stopped with one error, logged once, then commits the next group', async () => {
    const sessions = new SqliteSessionRepository(db);
    const other = new BetterSqlite3(path.join(dir, 'agents.db'));
    other.exec('BEGIN EXCLUSIVE');
    const results = await Promise.allSettled([
      sessions.create(session('s1')),
      sessions.create(session('s2')),
      sessions.create(session('s3')),
    ]);
    other.exec('COMMIT');
    other.close();
    const errors = results.map((r) => (r.status === 'rejected' ? r.reason : undefined));
    assert.ok(
      errors.every((e) => e instanceof AppError && e.reason === 'UNAVAILABLE'),
      String(errors),
    );
    const first = errors[0] as AppError;
    assert.match(first.message, /locked by another process/);
    assert.doesNotMatch(first.message, /SQLITE|INSERT|sessions/);
    assert.ok(
      errors.every((e) => (e as AppError).details['correlationId'] === first.details['correlationId']),
      'one failure, one correlation id',
    );
    assert.equal(logged.length, 1, 'logged once');
    assert.equal(logged[0]?.obj.correlationId, first.details['correlationId']);
    // Not wedged: the next writes commit.
    await Promise.all([sessions.create(session('s1')), sessions.create(session('s4'))]);
    assert.ok(await sessions.get('s4'));
  });

  it('maps failures of Kysely queries too, and leaves constraint errors to the repositories', async () => {
    db.sqlite.pragma('query_only = 1');
    await assert.rejects(
      sql`insert into namespaces (name, owner, created_at) values ('x', 'y', 'z')`.execute(db.kysely),
      (err: unknown) => err instanceof AppError && err.reason === 'UNAVAILABLE' && /read-only/.test(err.message),
    );
    db.sqlite.pragma('query_only = 0');
    const sessions = new SqliteSessionRepository(db);
    await sessions.create(session('dup'));
    await assert.rejects(
      sessions.create(session('dup')),
      (err: unknown) => !(err instanceof AppError && err.reason === 'UNAVAILABLE'),
    );
    assert.equal(logged.length, 1);
  });
});
