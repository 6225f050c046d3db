/**
 * Upgrading a database whose push queue a previous version kept in pg-boss 10's schema (`pgboss`,
 * schema version 24): pg-boss 12 cannot migrate that schema, so the queue now lives in its own
 * schema, the old one is left as it was (an instance of the previous version may still use it),
 * and the operator is told how to drop it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { Logger } from '../../../../src/application/index.ts';
import { PgBossPushScheduler, PUSH_QUEUE_SCHEMA } from '../../../../src/infrastructure/push/pg-boss.push-scheduler.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../../../support/postgres.ts';

/** The part of a pg-boss 10 schema that pg-boss reads first: its version table, at version 24. */
const PG_BOSS_10_SCHEMA = `
  create schema pgboss;
  create table pgboss.version (version int primary key, maintained_on timestamptz, cron_on timestamptz, monitored_on timestamptz);
  insert into pgboss.version (version) values (24);
  create table pgboss.job (id uuid primary key, name text not null);
  insert into pgboss.job values ('541bcb5d-4bac-44b1-a2f3-9adac4774f79', 'cleveragents-push');`;

function recordingLogger(): Logger & { infos: string[] } {
  const infos: string[] = [];
  return { infos, debug() {}, info: (_obj, msg) => void infos.push(msg ?? ''), warn() {}, error() {} };
}

describe('opening the push queue on a database a pg-boss 10 version used', { skip: pgSkip() }, () => {
  let made: PgTestDatabase;
  let admin: pg.Client;

  before(async () => {
    made = await createPgDatabase();
    admin = new pg.Client({ connectionString: made.url });
    await admin.connect();
  });

  after(async () => {
    await admin?.end();
    await made?.drop();
  });

  const dropNote = (infos: string[]): string | undefined => infos.find((m) => m.includes('DROP SCHEMA pgboss CASCADE'));

  it('says nothing of an old schema on a database that never had one', async () => {
    const logger = recordingLogger();
    const scheduler = await PgBossPushScheduler.open({ url: made.url, logger });
    await scheduler.stop();
    assert.equal(dropNote(logger.infos), undefined);
  });

  it('opens its own schema beside the old one, leaves the old one untouched, and names the step that drops it', async () => {
    await admin.query(PG_BOSS_10_SCHEMA);
    const logger = recordingLogger();
    const scheduler = await PgBossPushScheduler.open({ url: made.url, logger });
    await scheduler.stop();

    const old = await admin.query<{ version: number }>('select version from pgboss.version');
    assert.deepEqual(old.rows, [{ version: 24 }], 'the pg-boss 10 schema keeps its version');
    const jobs = await admin.query<{ n: number }>('select count(*)::int as n from pgboss.job');
    assert.equal(jobs.rows[0]?.n, 1, "the previous version's queued wake is still there for it");
    const current = await admin.query<{ version: number }>(`select version from ${PUSH_QUEUE_SCHEMA}.version`);
    assert.ok((current.rows[0]?.version ?? 0) > 24, `pg-boss 12 installed its schema in ${PUSH_QUEUE_SCHEMA}`);
    assert.match(dropNote(logger.infos) ?? '', new RegExp(`moved to schema "${PUSH_QUEUE_SCHEMA}"`));
  });

  it('could not have kept the old schema: pg-boss 12 refuses to migrate version 24', async () => {
    let opened: PgBossPushScheduler | undefined;
    try {
      await assert.rejects(async () => {
        opened = await PgBossPushScheduler.open({ url: made.url, logger: recordingLogger(), schema: 'pgboss' });
      }, /Cannot migrate pg-boss schema from version 24/);
    } finally {
      // Had it opened, its timers would keep the test process alive.
      await opened?.stop();
    }
    const old = await admin.query<{ version: number }>('select version from pgboss.version');
    assert.deepEqual(old.rows, [{ version: 24 }]);
  });
});
