import assert from 'node:assert/strict';
import type { App } from '../../src/main/app.ts';
import type { SqliteDatabase, SqliteStorage } from '../../src/infrastructure/index.ts';

/** The SQLite database of an app built on the embedded default (tests that reach into the file). */
export function sqliteOf(app: App): SqliteDatabase {
  assert.equal(app.storage.engine, 'sqlite', 'this test needs the SQLite engine');
  return (app.storage as SqliteStorage).db;
}
