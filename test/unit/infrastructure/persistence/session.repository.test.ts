import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '../../../../src/domain/a2a.model.ts';
import type { Session } from '../../../../src/domain/session.ts';
import type {
  ForkedTurn,
  SessionCursor,
  SessionRepository,
  TaskRepository,
  Transcript,
  TranscriptStore,
} from '../../../../src/application/index.ts';
import {
  SqliteSessionRepository,
  SqliteTaskRepository,
  SqliteTranscriptStore,
} from '../../../../src/infrastructure/index.ts';
import { PgSessionRepository } from '../../../../src/infrastructure/persistence/postgres/pg-session.repository.ts';
import { PgTaskRepository } from '../../../../src/infrastructure/persistence/postgres/pg-task.repository.ts';
import { PgTranscriptStore } from '../../../../src/infrastructure/persistence/postgres/pg-transcript.store.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';
import { insertPlanRow, insertTaskRow, kyselyOf } from '../../../support/rows.ts';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

function session(id: string, owner = 'alice', updated = 0): Session {
  return { id, owner, actor: 'builtin/echo', createdAt: at(0), updatedAt: at(updated), taskCount: 0 };
}

const reason = (r: string) => (err: unknown) => (err as { reason?: string }).reason === r;

function sessionsOf(e: OpenedEngine): SessionRepository {
  return e.pg ? new PgSessionRepository(e.pg) : new SqliteSessionRepository(e.sqlite!);
}

function tasksOf(e: OpenedEngine): TaskRepository {
  return e.pg ? new PgTaskRepository(e.pg, { runnerId: 'r1' }) : new SqliteTaskRepository(e.sqlite!);
}

function transcriptsOf(e: OpenedEngine): TranscriptStore {
  return e.pg ? new PgTranscriptStore(e.pg) : new SqliteTranscriptStore(e.sqlite!);
}

/** A finished turn of context `contextId`, its status time `s` seconds after T0. */
function turn(id: string, contextId: string, s: number): Task {
  return {
    id,
    contextId,
    status: { state: 'TASK_STATE_COMPLETED', timestamp: at(s) },
    history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: `asked ${id}` }], taskId: id, contextId }],
    artifacts: [{ artifactId: 'answer', parts: [{ text: `answer ${id}` }] }],
  };
}

function transcript(text: string): Transcript {
  return {
    messages: [{ role: 'user', text }],
    steps: 1,
    usage: { inputTokens: 1, outputTokens: 1 },
    toolCalls: 0,
  };
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

    it('rewrites the settings of the next turns (actor, skills, context), keeps the rest, and says when the session is missing', async () => {
      await repo.create({ ...session('s1', 'alice', 10), title: 'T', skills: ['local/a'], project: 'local/p' });
      await repo.touch('s1', at(12), 1);
      assert.equal(
        await repo.updateSettings('s1', { actor: 'local/coder', skills: ['local/b'], context: 'full' }, at(20)),
        true,
      );
      assert.deepEqual(await repo.get('s1'), {
        ...session('s1', 'alice', 20),
        actor: 'local/coder',
        title: 'T',
        project: 'local/p',
        skills: ['local/b'],
        context: 'full',
        taskCount: 1,
      });
      // No skills and no mode clear them; an earlier instant leaves updatedAt as it is.
      assert.equal(await repo.updateSettings('s1', { actor: 'local/coder' }, at(5)), true);
      const cleared = await repo.get('s1');
      assert.deepEqual([cleared?.skills, cleared?.context, cleared?.updatedAt], [undefined, undefined, at(20)]);
      assert.equal(await repo.updateSettings('nope', { actor: 'local/coder' }, at(30)), false);
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

    // SQLite applies writes in call order (one group commit); PostgreSQL runs concurrent ones on a pool.
    it(
      'stores what touches one after another would when they are issued together with inserts and a delete',
      { skip: engine.name !== 'sqlite' && 'concurrent writes keep call order on SQLite only' },
      async () => {
        await Promise.all([
          repo.create(session('s1', 'alice', 10)),
          repo.touch('s1', at(20), 1),
          repo.touch('s1', '', 1),
          repo.touch('s1', at(15), 0),
          repo.create(session('s2', 'alice', 0)),
          repo.touch('s2', at(5), 1),
        ]);
        assert.deepEqual(await repo.get('s1'), { ...session('s1', 'alice', 20), taskCount: 2 });
        assert.deepEqual(await repo.get('s2'), { ...session('s2', 'alice', 5), taskCount: 1 });
        // The touch belongs to the session deleted after it, not to the one created after that.
        await Promise.all([repo.touch('s2', at(30), 1), repo.delete('s2'), repo.create(session('s2', 'alice', 1))]);
        assert.deepEqual(await repo.get('s2'), session('s2', 'alice', 1));
      },
    );

    it('keeps a session’s project and skills', async () => {
      const full = { ...session('s1'), project: 'web', skills: ['review', 'git'] };
      await repo.create(full);
      assert.deepEqual(await repo.get('s1'), full);
    });

    it('keeps a session’s context mode, and reads one it does not know as the default', async () => {
      await repo.create({ ...session('s1'), context: 'full' });
      await repo.create({ ...session('s2', 'alice', 1), context: 'map' });
      await repo.create(session('s3', 'alice', 2));
      assert.equal((await repo.get('s1'))?.context, 'full');
      assert.equal((await repo.get('s2'))?.context, 'map');
      assert.deepEqual(await repo.get('s3'), session('s3', 'alice', 2));
      assert.deepEqual(
        (await repo.list('alice', 10)).sessions.map((s) => [s.id, s.context]),
        [
          ['s3', undefined],
          ['s2', 'map'],
          ['s1', 'full'],
        ],
      );
      await kyselyOf(db).updateTable('sessions').set({ context: 'everything' }).where('id', '=', 's1').execute();
      assert.equal((await repo.get('s1'))?.context, undefined);
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

    describe('createFork', () => {
      const fork = (id: string, n: number): Session => ({
        ...session(id, 'alice', 30),
        taskCount: n,
        forkedFrom: { sessionId: 'src', taskId: 'old-2' },
      });
      const turns = (id: string): ForkedTurn[] => [
        // Status times out of order: the listing follows the fork's order, not these.
        { task: turn('f1', id, 20), transcript: transcript('one') },
        { task: turn('f2', id, 10) },
        { task: turn('f3', id, 15), transcript: transcript('three') },
      ];

      it('stores the session, its turns in order, their transcripts and counts, and where it came from', async () => {
        const tasks = tasksOf(db);
        await tasks.create(turn('other', 'elsewhere', 0), 'alice');
        const made = fork('fk', 3);
        await repo.createFork(made, turns('fk'));
        assert.deepEqual(await repo.get('fk'), made);
        const listed = await tasks.listByContext('fk', 10);
        assert.deepEqual(
          listed.map((t) => [t.task.id, t.owner, t.task.artifacts?.[0]?.parts[0]?.text]),
          [
            ['f1', 'alice', 'answer f1'],
            ['f2', 'alice', 'answer f2'],
            ['f3', 'alice', 'answer f3'],
          ],
        );
        assert.deepEqual((await tasks.get('f2'))?.task, turn('f2', 'fk', 10));
        assert.equal(await tasks.countByContext('fk'), 3);
        // The maintained counts: the context's and the owner's total (the other task included).
        assert.equal((await tasks.list({ owner: 'alice', contextId: 'fk', limit: 1 })).total, 3);
        assert.equal((await tasks.list({ owner: 'alice', limit: 1 })).total, 4);
        const kept = await transcriptsOf(db).forContext('fk', ['f1', 'f2', 'f3']);
        assert.deepEqual([...kept.keys()].sort(), ['f1', 'f3']);
        assert.deepEqual(kept.get('f3'), transcript('three'));
      });

      it('a later turn lists after the copies', async () => {
        const tasks = tasksOf(db);
        await repo.createFork(fork('fk', 3), turns('fk'));
        await tasks.create(
          { ...turn('next', 'fk', 0), status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() } },
          'alice',
        );
        assert.deepEqual(
          (await tasks.listByContext('fk', 10)).map((t) => t.task.id),
          ['f1', 'f2', 'f3', 'next'],
        );
      });

      it('stores an empty fork', async () => {
        const empty = { ...session('e', 'alice', 1), forkedFrom: { sessionId: 'src' } };
        await repo.createFork(empty, []);
        assert.deepEqual(await repo.get('e'), empty);
        assert.equal(await tasksOf(db).countByContext('e'), 0);
      });

      it('refuses a taken session id and stores none of the turns', async () => {
        await repo.create(session('fk'));
        await assert.rejects(repo.createFork(fork('fk', 3), turns('fk')), reason('ALREADY_EXISTS'));
        assert.equal(await tasksOf(db).countByContext('fk'), 0);
        assert.equal(await tasksOf(db).get('f1'), undefined);
        assert.deepEqual(await repo.get('fk'), session('fk'));
      });

      it('stores nothing when a turn cannot be stored (all or nothing)', async () => {
        await insertTaskRow(db, 'f3', 'elsewhere');
        await assert.rejects(repo.createFork(fork('fk', 3), turns('fk')));
        assert.equal(await repo.get('fk'), undefined);
        const tasks = tasksOf(db);
        assert.equal(await tasks.countByContext('fk'), 0);
        assert.equal(await tasks.get('f1'), undefined);
        assert.equal((await tasks.list({ owner: 'alice', limit: 1 })).total, 0);
        assert.equal((await transcriptsOf(db).forContext('fk', ['f1'])).size, 0);
      });
    });
  });
