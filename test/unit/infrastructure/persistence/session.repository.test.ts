import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Session } from '../../../../src/domain/session.js';
import type { SessionCursor, SessionRepository } from '../../../../src/application/index.js';
import { SqliteSessionRepository } from '../../../../src/infrastructure/index.js';
import { PgSessionRepository } from '../../../../src/infrastructure/persistence/postgres/pg-session.repository.js';
import { ENGINES, type OpenedEngine } from '../../../support/engines.js';
import { insertPlanRow, insertTaskRow } from '../../../support/rows.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

function session(id: string, owner = 'alice', updated = 0): Session {
  return { id, owner, actor: 'builtin/echo', createdAt: at(0), updatedAt: at(updated), taskCount: 0 };
}

const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

function sessionsOf(e: OpenedEngine): SessionRepository {
  return e.pg ? new PgSessionRepository(e.pg) : new SqliteSessionRepository(e.sqlite!);
}

for (const engine of ENGINES)
  describe(`session repository on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let repo: SessionRepository;

    beforeEach(async () => {
      db = await engine.open();
      repo = sessionsOf(db);
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

    it('counts every task of concurrent touches (one statement each, no lost update)', async () => {
      await repo.create(session('s1', 'alice', 0));
      await Promise.all(Array.from({ length: 40 }, (_, i) => repo.touch('s1', at(i + 1), 1)));
      assert.deepEqual(await repo.get('s1'), { ...session('s1', 'alice', 40), taskCount: 40 });
    });

    it('keeps a session’s project and skills', async () => {
      const full = { ...session('s1'), project: 'web', skills: ['review', 'git'] };
      await repo.create(full);
      assert.deepEqual(await repo.get('s1'), full);
    });

    it('deleteIdle removes idle empty sessions only, oldest first and at most limit', async () => {
      for (const [id, t] of [
        ['a', 1],
        ['b', 2],
        ['c', 3],
        ['busy', 1],
        ['planned', 1],
        ['fresh', 100],
      ] as const)
        await repo.create(session(id, 'alice', t));
      await insertTaskRow(db, 't-busy', 'busy');
      await insertPlanRow(db, 'p-planned', { contextId: 'planned' });
      assert.equal(await repo.deleteIdle(at(50), 2), 2);
      assert.deepEqual((await repo.list('alice', 10)).sessions.map((s) => s.id).sort(), [
        'busy',
        'c',
        'fresh',
        'planned',
      ]);
      assert.equal(await repo.deleteIdle(at(50), 10), 1);
      assert.equal(await repo.deleteIdle(at(50), 10), 0);
      assert.equal(await repo.get('c'), undefined);
    });
  });
