import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Session } from '../../../../src/domain/session.js';
import type { SessionCursor } from '../../../../src/application/index.js';
import { openDatabase, SqliteSessionRepository, type SqliteDatabase } from '../../../../src/infrastructure/index.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

function session(id: string, owner = 'alice', updated = 0): Session {
  return { id, owner, actor: 'builtin/echo', createdAt: at(0), updatedAt: at(updated), taskCount: 0 };
}

const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

describe('SqliteSessionRepository', () => {
  let db: SqliteDatabase;
  let repo: SqliteSessionRepository;

  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
    repo = new SqliteSessionRepository(db);
  });
  afterEach(() => db.close());

  it('stores and returns a session, with and without a title', async () => {
    const plain = session('s1');
    const titled = { ...session('s2'), title: 'Release notes' };
    await repo.create(plain);
    await repo.create(titled);
    assert.deepEqual(await repo.get('s1'), plain);
    assert.deepEqual(await repo.get('s2'), titled);
    assert.equal(await repo.get('s3'), undefined);
  });

  it('refuses a second session with the same id', async () => {
    await repo.create(session('s1'));
    await assert.rejects(repo.create(session('s1')), reason('ALREADY_EXISTS'));
  });

  it('pages an owner’s sessions newest first through equal times, with the total', async () => {
    // The newest session has the smallest id, so a cursor that ignored time would lose the rest.
    for (const id of ['a', 'b', 'c', 'd']) await repo.create(session(id, 'alice', 5));
    await repo.create(session('0', 'alice', 9));
    await repo.create(session('z', 'bob', 50));
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: SessionCursor | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await repo.list('alice', limit, cursor);
        assert.equal(page.total, 5);
        seen.push(...page.sessions.map((s) => s.id));
        cursor = page.next;
        if (!cursor) break;
      }
      assert.deepEqual(seen, ['0', 'd', 'c', 'b', 'a'], `limit ${limit}`);
    }
    assert.equal((await repo.list('alice', 5)).next, undefined);
    assert.deepEqual(
      (await repo.list('bob', 10)).sessions.map((s) => s.id),
      ['z'],
    );
  });

  it('touch moves updatedAt forward only and adds to the task count', async () => {
    await repo.create(session('s1', 'alice', 10));
    await repo.touch('s1', at(20), 1);
    await repo.touch('s1', at(15), 1);
    await repo.touch('s1', '2026-03-01T10:00:18Z', 0);
    assert.deepEqual(await repo.get('s1'), { ...session('s1', 'alice', 20), taskCount: 2 });
  });

  it('touch reorders the listing', async () => {
    await repo.create(session('old', 'alice', 1));
    await repo.create(session('new', 'alice', 2));
    await repo.touch('old', at(3), 0);
    assert.deepEqual(
      (await repo.list('alice', 10)).sessions.map((s) => s.id),
      ['old', 'new'],
    );
  });

  it('touch ignores a missing session and still counts tasks without a usable time', async () => {
    await repo.touch('missing', at(1), 1);
    await repo.create(session('s1', 'alice', 10));
    await repo.touch('s1', '', 1);
    assert.deepEqual(await repo.get('s1'), { ...session('s1', 'alice', 10), taskCount: 1 });
  });

  it('delete says whether a session went', async () => {
    await repo.create(session('s1'));
    assert.equal(await repo.delete('s1'), true);
    assert.equal(await repo.delete('s1'), false);
    assert.equal(await repo.get('s1'), undefined);
  });
});
