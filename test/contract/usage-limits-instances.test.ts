/**
 * Per-user limits counted across instances (issue #40): two instances on one database see the
 * same running turns and the same model tokens of a user, because both are read from the database
 * (the task rows, the ledger of model steps), not from a counter of each instance. SQLite (two openings of one file) and
 * PostgreSQL (two instances on one database; skipped loudly without CA_TEST_PG_URL).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makePrincipal, type Principal } from '../../src/application/index.ts';
import type { Task } from '../../src/domain/a2a.model.ts';
import { AppError } from '../../src/domain/errors.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';

const ENGINES = [
  { name: 'sqlite', skip: (): string | false => false },
  { name: 'postgresql', skip: pgSkip },
] as const;

let seq = 0;
const send = async (principal: Principal, app: App): Promise<{ task: Task }> => {
  const r = await app.facade.tasks.send(
    {
      message: { messageId: `i-${++seq}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
      configuration: { returnImmediately: true },
    },
    principal,
  );
  assert.ok('task' in r, JSON.stringify(r));
  return r;
};

async function refusedFor(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AppError && err.reason === 'BUDGET_EXCEEDED', String(err));
    return String(err.details['limit']);
  }
  assert.fail('expected a refusal over a limit');
}

for (const engine of ENGINES) {
  describe(`per-user limits across two instances on ${engine.name}`, { skip: engine.skip() }, () => {
    let a: App;
    let b: App;
    let db: PgTestDatabase | undefined;
    const dirs: string[] = [];
    before(async () => {
      if (engine.name === 'postgresql') db = await createPgDatabase('ca_limits');
      const open = (dataDir: string) =>
        buildApp({
          dataDir,
          defaultActor: 'builtin/conformance',
          card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
          usageLimits: { requestsPerMinute: 0, concurrentTurns: 1, tokensPerDay: 1000 },
          ...(db ? { databaseUrl: db.url } : {}),
        });
      const shared = mkdtempSync(join(tmpdir(), 'ca-limits-two-'));
      dirs.push(shared);
      // SQLite: both open the data directory's one file; PostgreSQL: each its own directory.
      a = await open(shared);
      const other = db ? mkdtempSync(join(tmpdir(), 'ca-limits-two-')) : shared;
      if (other !== shared) dirs.push(other);
      b = await open(other);
    });
    after(async () => {
      await a.close();
      await b.close();
      await db?.drop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it("refuses a user's turn on one instance while their turn runs on the other", async () => {
      const bob = makePrincipal({ id: 'bob', roles: { bob: 'owner' } });
      const first = await send(bob, a);
      assert.equal(await refusedFor(send(bob, b)), 'concurrentTurns');
      // Another user of the same namespace is counted on their own.
      const guest = makePrincipal({ id: 'guest', roles: { bob: 'member' } });
      const theirs = await send(guest, b);
      await a.facade.tasks.cancel(first.task.id, bob);
      await b.facade.tasks.cancel(theirs.task.id, guest);
      // The turn ended: the next one starts, on the other instance.
      const next = await send(bob, b);
      await b.facade.tasks.cancel(next.task.id, bob);
    });

    it("refuses a user's turn on one instance once their turns on the other used the day's tokens", async () => {
      const carol = makePrincipal({ id: 'carol', roles: { carol: 'owner' } });
      // Model steps metered on instance a: 500 of 1000 tokens used.
      await a.storage.quota.record('carol', 500, new Date().toISOString());
      // Yesterday's do not count.
      await a.storage.quota.record('carol', 5000, new Date(Date.now() - 86_400_000).toISOString());
      const under = await send(carol, b);
      await b.facade.tasks.cancel(under.task.id, carol);
      await a.storage.quota.record('carol', 500, new Date().toISOString());
      assert.equal(await refusedFor(send(carol, b)), 'tokensPerDay');
      assert.equal(await refusedFor(send(carol, a)), 'tokensPerDay');
    });
  });
}
