/**
 * Statements prepared once per connection on PostgreSQL (issue #40, point 7), and the plain
 * fallback when the connection does not keep them (a pooler in front, here DEALLOCATE ALL).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../../../src/application/index.ts';
import { openPgDatabase, type PgDatabase } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../../../support/postgres.ts';

describe('statements on PostgreSQL', { skip: pgSkip() }, () => {
  let made: PgTestDatabase;
  const opened: PgDatabase[] = [];

  before(async () => {
    made = await createPgDatabase('ca_prep');
  });
  after(async () => {
    for (const db of opened) await db.close();
    await made?.drop();
  });

  /** One connection, so every statement below runs on the same one. */
  async function open(prepare?: boolean): Promise<PgDatabase> {
    const db = await openPgDatabase({ url: made.url, poolSize: 1, logger: silentLogger, prepare });
    opened.push(db);
    return db;
  }
  const prepared = async (db: PgDatabase): Promise<string[]> =>
    (await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(db.kysely)).rows.map(
      (r) => r.name,
    );
  const twice = async (db: PgDatabase, marker: string): Promise<void> => {
    for (let i = 0; i < 2; i++) {
      const r = await sql<{ v: string }>`select ${marker}::text || ${String(i)} as v`.execute(db.kysely);
      assert.equal(r.rows[0]?.v, `${marker}${i}`);
    }
  };

  it('prepares a statement with parameters once per connection and runs it again by name', async () => {
    const db = await open();
    const before = await prepared(db);
    await twice(db, 'a');
    const added = (await prepared(db)).filter((n) => !before.includes(n));
    assert.equal(added.length, 1, `one statement prepared: ${added.join(', ')}`);
    assert.match(added[0] ?? '', /^ca_/);
  });

  it('goes on with plain statements when the connection lost what it had prepared', async () => {
    const db = await open();
    await twice(db, 'b');
    // What a pooler that hands the next statement to another server connection looks like.
    await sql`deallocate all`.execute(db.kysely);
    await twice(db, 'b');
    await twice(db, 'c');
    assert.deepEqual(await prepared(db), [], 'nothing prepared again once the fallback took over');
  });

  it('prepares nothing when told not to', async () => {
    const db = await open(false);
    await twice(db, 'd');
    assert.deepEqual(await prepared(db), []);
  });
});
