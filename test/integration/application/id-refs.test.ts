/**
 * Ids as users type them: a unique prefix, or `last`, resolved by the application layer over the
 * real repositories (SQLite and PostgreSQL), within what the caller may see.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Task } from '../../../src/domain/a2a.model.ts';
import { AppError } from '../../../src/domain/errors.ts';
import type { Plan } from '../../../src/domain/plan/plan.ts';
import type { Session } from '../../../src/domain/session.ts';
import { makePrincipal, type PlanRepository, type TaskRepository } from '../../../src/application/index.ts';
import { PlanAccess } from '../../../src/application/plans/plan-access.service.ts';
import { SessionService } from '../../../src/application/sessions/session.service.ts';
import {
  SqlitePlanRepository,
  SqliteSessionRepository,
  SqliteTaskRepository,
} from '../../../src/infrastructure/index.ts';
import { PgPlanRepository } from '../../../src/infrastructure/persistence/postgres/pg-plan.repository.ts';
import { PgSessionRepository } from '../../../src/infrastructure/persistence/postgres/pg-session.repository.ts';
import { PgTaskRepository } from '../../../src/infrastructure/persistence/postgres/pg-task.repository.ts';
import { ENGINES, type OpenedEngine } from '../../support/engines.ts';
import { aPlan } from '../../support/builders.ts';

const alice = makePrincipal({ id: 'alice', roles: { alice: 'owner' } });
const bob = makePrincipal({ id: 'bob', roles: { bob: 'owner' } });
const at = (s: number): string => new Date(Date.parse('2026-03-01T10:00:00.000Z') + s * 1000).toISOString();

function plan(id: string, owner: string, created: number, description = `plan ${id}`): Plan {
  return aPlan({ id, name: id, owner, description, createdAt: at(created), updatedAt: at(created) });
}

function session(id: string, owner: string, updated: number): Session {
  return { id, owner, actor: 'echo', title: `about ${id}`, createdAt: at(0), updatedAt: at(updated), taskCount: 0 };
}

function task(id: string, updated: number): Task {
  return { id, contextId: 'ctx-1', status: { state: 'TASK_STATE_COMPLETED', timestamp: at(updated) }, history: [] };
}

/** The AppError `fn` throws (fails the test when it throws none or another kind). */
async function refusal(fn: () => Promise<unknown>): Promise<AppError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof AppError, `an AppError, not ${String(err)}`);
    return err;
  }
  assert.fail('expected a refusal');
}

for (const engine of ENGINES)
  describe(`ids by prefix and last on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let plans: PlanRepository;
    let access: PlanAccess;
    let sessions: SessionService;
    let tasks: TaskRepository;

    beforeEach(async () => {
      db = await engine.open();
      plans = db.pg ? new PgPlanRepository(db.pg) : new SqlitePlanRepository(db.sqlite!);
      access = new PlanAccess({
        plans,
        engine: { load: (id: string) => plans.get(id), running: new Set<string>() } as never,
      });
      tasks = db.pg ? new PgTaskRepository(db.pg, { runnerId: 'r1' }) : new SqliteTaskRepository(db.sqlite!);
      const sessionRepo = db.pg ? new PgSessionRepository(db.pg) : new SqliteSessionRepository(db.sqlite!);
      sessions = new SessionService({ sessions: sessionRepo, tasks, actors: {} as never, defaultActor: 'echo' });
      await plans.create(plan('01JAAAA0000000000000000001', 'alice', 1, 'Fix the parser'));
      await plans.create(plan('01JAAAB0000000000000000002', 'alice', 2, 'Add a README'));
      await plans.create(plan('01JAAAB0000000000000000003', 'alice', 3, 'Rename things'));
      // Bob's plan shares alice's prefixes: alice must never see it, not even as a candidate.
      await plans.create(plan('01JAAAA9000000000000000009', 'bob', 9, 'Bob secret'));
      await sessionRepo.create(session('01JSESS000000000000000000A', 'alice', 1));
      await sessionRepo.create(session('01JSESS100000000000000000B', 'alice', 5));
      await sessionRepo.create(session('01JSESS200000000000000000C', 'bob', 9));
    });
    afterEach(() => db.close());

    it('finds a plan by a unique prefix, in either case, and by its exact id', async () => {
      assert.equal((await access.get('01JAAAA', alice)).id, '01JAAAA0000000000000000001');
      assert.equal((await access.get('01jaaaa', alice)).id, '01JAAAA0000000000000000001');
      assert.equal((await access.get('01JAAAB0000000000000000003', alice)).id, '01JAAAB0000000000000000003');
      assert.equal((await access.get('01JAAAA', bob)).id, '01JAAAA9000000000000000009');
    });

    it('refuses an ambiguous prefix, listing only the caller’s candidates with their descriptions', async () => {
      const err = await refusal(() => access.get('01JAAA', alice));
      assert.equal(err.reason, 'INVALID_PARAMS');
      assert.deepEqual(err.details['candidates'], [
        { id: '01JAAAB0000000000000000003', description: 'Rename things' },
        { id: '01JAAAB0000000000000000002', description: 'Add a README' },
        { id: '01JAAAA0000000000000000001', description: 'Fix the parser' },
      ]);
      assert.match(err.message, /01JAAAB0000000000000000002 {2}Add a README/);
      assert.doesNotMatch(err.message, /Bob|0009/);
      assert.match(err.hint ?? '', /type more characters/);
    });

    it('refuses a prefix shorter than 4 characters, saying so', async () => {
      const err = await refusal(() => access.get('01J', alice));
      assert.equal(err.reason, 'INVALID_PARAMS');
      assert.match(err.message, /at least 4 characters/);
    });

    it('treats % and _ in a prefix as themselves, and an unknown prefix as not found', async () => {
      assert.equal((await refusal(() => access.get('01JA%', alice))).reason, 'NOT_FOUND');
      assert.equal((await refusal(() => access.get('01JAA_A', alice))).reason, 'NOT_FOUND');
      assert.equal((await refusal(() => access.get('01JZZZ', alice))).reason, 'NOT_FOUND');
    });

    it('never finds another user’s plan by its prefix or exact id', async () => {
      assert.equal((await refusal(() => access.get('01JAAAA9', alice))).reason, 'NOT_FOUND');
      assert.equal((await refusal(() => access.get('01JAAAA9000000000000000009', alice))).reason, 'NOT_FOUND');
    });

    it('resolves `last` to the caller’s newest plan, and says when there is none', async () => {
      assert.equal((await access.get('last', alice)).id, '01JAAAB0000000000000000003');
      assert.equal((await access.get('last', bob)).id, '01JAAAA9000000000000000009');
      const carol = makePrincipal({ id: 'carol', roles: { carol: 'owner' } });
      const err = await refusal(() => access.get('last', carol));
      assert.equal(err.reason, 'NOT_FOUND');
      assert.match(err.message, /no plan yet/);
    });

    it('resolves sessions by prefix and `last`, within the caller’s own', async () => {
      assert.equal((await sessions.get('01JSESS1', alice)).id, '01JSESS100000000000000000B');
      assert.equal((await sessions.get('last', alice)).id, '01JSESS100000000000000000B');
      assert.equal((await sessions.get('last', bob)).id, '01JSESS200000000000000000C');
      const err = await refusal(() => sessions.get('01JSESS', alice));
      assert.equal(err.reason, 'INVALID_PARAMS');
      assert.deepEqual(
        (err.details['candidates'] as { id: string }[]).map((c) => c.id),
        ['01JSESS100000000000000000B', '01JSESS000000000000000000A'],
      );
      assert.equal((await refusal(() => sessions.get('01JSESS2', alice))).reason, 'NOT_FOUND');
    });

    it('lists only the sessions of a project when asked, the newest first (what `last` of a project reads)', async () => {
      const repo = db.pg ? new PgSessionRepository(db.pg) : new SqliteSessionRepository(db.sqlite!);
      await repo.create({ ...session('01JSESS300000000000000000D', 'alice', 2), project: 'local/app' });
      await repo.create({ ...session('01JSESS400000000000000000E', 'alice', 3), project: 'local/app' });
      await repo.create({ ...session('01JSESS500000000000000000F', 'bob', 4), project: 'local/app' });
      const page = await sessions.list(alice, 1, undefined, 'local/app');
      assert.deepEqual(
        page.sessions.map((s) => s.id),
        ['01JSESS400000000000000000E'],
      );
      assert.equal(page.totalSize, 2);
      assert.equal((await sessions.list(alice, 10, undefined, 'local/other')).totalSize, 0);
      assert.equal((await sessions.list(alice, 10)).totalSize, 4);
    });

    it('lists sessions with the message that opened each (from its first task)', async () => {
      const opening = (id: string, ctx: string, text: string, s: number): Task => ({
        ...task(id, s),
        contextId: ctx,
        // A chat's @path mention travels as a part carrying the file: not the message's words.
        history: [
          {
            messageId: `m${id}`,
            role: 'ROLE_USER',
            contextId: ctx,
            taskId: id,
            parts: [{ text }, { text: '--- a.ts ---\nsecret', filename: 'a.ts', mediaType: 'text/plain' }],
          },
        ],
      });
      await tasks.create(opening('01JT1', '01JSESS100000000000000000B', 'fix the parser', 1), 'alice');
      await tasks.create(opening('01JT2', '01JSESS100000000000000000B', 'and now the tests', 2), 'alice');
      const page = await sessions.list(alice, 10);
      assert.deepEqual(
        page.sessions.map((s) => [s.id, s.firstMessage]),
        [
          ['01JSESS100000000000000000B', 'fix the parser'],
          ['01JSESS000000000000000000A', undefined],
        ],
      );
    });

    it('lists the caller’s tasks by id prefix, newest first, and no one else’s', async () => {
      await tasks.create(task('01JTASK000000000000000000A', 1), 'alice');
      await tasks.create(task('01JTASK100000000000000000B', 2), 'alice');
      await tasks.create(task('01JTASK200000000000000000C', 3), 'bob');
      assert.deepEqual(
        (await tasks.refsByIdPrefix('alice', '01JTASK', 11)).map((t) => t.id),
        ['01JTASK100000000000000000B', '01JTASK000000000000000000A'],
      );
      assert.deepEqual(await tasks.refsByIdPrefix('alice', '01JTASK2', 11), []);
      assert.deepEqual(await tasks.refsByIdPrefix('alice', '01JTAS_1', 11), []);
    });
  });
