/**
 * PostgreSQL failures as callers are told them (issue #40, point 3): "nothing was changed" only
 * when the statement cannot have run; a connection lost mid-statement may have committed it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { PgStorageFailures } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';

const mapped = (err: unknown): AppError => {
  const out = new PgStorageFailures(silentLogger).map(err);
  assert.ok(out instanceof AppError, 'a storage failure');
  assert.equal(out.reason, 'UNAVAILABLE');
  return out;
};
const coded = (code: string, message = code): Error => Object.assign(new Error(message), { code });

describe('PgStorageFailures', () => {
  it('says nothing was changed when no connection could be made', () => {
    for (const err of [
      coded('ECONNREFUSED'),
      new Error('timeout exceeded when trying to connect'),
      coded('57P03', 'the database system is starting up'),
      coded('55000', 'database "ca" is not currently accepting connections'),
    ]) {
      assert.match(mapped(err).message, /nothing was changed by this request$/, String(err));
    }
  });

  it('never says nothing was changed when the connection was lost during a statement', () => {
    for (const err of [
      new Error('Connection terminated unexpectedly'),
      coded('ECONNRESET'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('08006', 'connection failure'),
    ]) {
      const m = mapped(err).message;
      assert.doesNotMatch(m, /nothing was changed/, m);
      assert.match(m, /may or may not have been made/);
    }
  });

  it('passes other errors through', () => {
    const err = coded('23505', 'duplicate key');
    assert.equal(new PgStorageFailures(silentLogger).map(err), err);
  });
});
