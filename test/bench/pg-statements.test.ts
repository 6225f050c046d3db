import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs } from '../../bench/lib/config.ts';
import { StatementTallier } from '../../bench/lib/pg-statements.ts';
import { Report } from '../../bench/lib/report.ts';
import { postgresWorkload } from '../../bench/workloads/postgres.ts';

describe('bench: counting PostgreSQL round trips', () => {
  it('counts a transaction that writes as its every round trip, and one that only reads as none', () => {
    const t = new StatementTallier();
    const a = {};
    const b = {};
    t.seen(a, 'begin');
    t.seen(b, 'select 1');
    t.seen(a, 'select "id" from "tasks" where "id" = $1');
    t.seen(a, 'update "tasks" set "state" = $1 where "id" = $2');
    t.seen(b, 'begin');
    t.seen(b, 'select "id" from "tasks"');
    t.seen(b, 'commit');
    t.seen(a, 'commit');
    assert.equal(t.tally.roundTrips, 8);
    assert.equal(t.tally.writingRoundTrips, 4, "a's begin, select, update and commit");
    assert.equal(t.tally.writingTransactions, 1);
  });

  it('takes a statement on its own as a transaction, and knows writes in CTEs, locks and notifications', () => {
    const t = new StatementTallier();
    const c = {};
    const writes = [
      'with e as (insert into task_events (task_id) values ($1) returning seq) select pg_notify($2, $3) from e',
      'with u as (update tasks set state = $1 where id = $2 returning id) select 1 from u',
      'insert into "sessions" ("id") values ($1)',
      'delete from "push_configs" where "task_id" = $1',
      'select "id" from "runners" where "id" = $1 for update',
      'select pg_notify($1, $2)',
    ];
    for (const sql of writes) t.seen(c, sql);
    t.seen(c, 'select "config" from "push_configs" where "task_id" = $1 order by "id"');
    t.seen(c, 'with x as (select 1) select * from x');
    assert.equal(t.tally.writingRoundTrips, writes.length);
    assert.equal(t.tally.writingTransactions, writes.length);
    assert.equal(t.tally.roundTrips, writes.length + 2);
    assert.equal(t.tally.shapes.get('select pg_notify($1, $2)')?.writes, true);
  });

  it('takes the PostgreSQL URL from --pg-url first, then CA_BENCH_PG_URL, then CA_TEST_PG_URL', () => {
    const saved = { b: process.env['CA_BENCH_PG_URL'], t: process.env['CA_TEST_PG_URL'] };
    try {
      process.env['CA_BENCH_PG_URL'] = 'postgres://bench';
      process.env['CA_TEST_PG_URL'] = 'postgres://test';
      assert.equal(parseArgs(['--pg-url=postgres://arg']).pgUrl, 'postgres://arg');
      assert.equal(parseArgs([]).pgUrl, 'postgres://bench');
      delete process.env['CA_BENCH_PG_URL'];
      assert.equal(parseArgs([]).pgUrl, 'postgres://test');
      delete process.env['CA_TEST_PG_URL'];
      assert.equal(parseArgs([]).pgUrl, undefined);
    } finally {
      for (const [k, v] of [
        ['CA_BENCH_PG_URL', saved.b],
        ['CA_TEST_PG_URL', saved.t],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });

  it('skips the PostgreSQL rows with a note when no database is given', async () => {
    const report = new Report();
    const lines: string[] = [];
    await postgresWorkload({ ...parseArgs(['--quick']), pgUrl: undefined }, report, (s) => lines.push(s));
    assert.deepEqual(report.figures, []);
    assert.match(report.notes.join('\n'), /^postgres rows skipped: no PostgreSQL \(pass --pg-url=/);
    assert.match(lines.join('\n'), /^skipped: no PostgreSQL/);
  });
});
