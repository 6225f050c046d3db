/**
 * The storage engines a repository contract suite runs on: the embedded SQLite file and a
 * PostgreSQL database (see postgres.ts; skipped loudly when absent, never in CI).
 *
 *   for (const engine of ENGINES)
 *     describe(`task repository on ${engine.name}`, { skip: engine.skip() }, () => { ... });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../src/infrastructure/index.ts';
import { openPgDatabase, type PgDatabase } from '../../src/infrastructure/persistence/postgres/pg-database.ts';
import { createPgDatabase, pgSkip } from './postgres.ts';

export type EngineName = 'sqlite' | 'postgresql';

/** An opened engine: exactly one of `sqlite` and `pg` is set. */
export interface OpenedEngine {
  name: EngineName;
  sqlite?: SqliteDatabase;
  pg?: PgDatabase;
  /** For a second process or instance: the same data (a file path or a database URL). */
  location: string;
  close(): Promise<void>;
}

export interface Engine {
  name: EngineName;
  /** Why the engine's tests are skipped here, or false. */
  skip(): string | false;
  /** A new, empty, migrated database. */
  open(): Promise<OpenedEngine>;
}

export const SQLITE: Engine = {
  name: 'sqlite',
  skip: () => false,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'ca-engine-'));
    const file = join(dir, 'state.db');
    const sqlite = await openDatabase({ file });
    return {
      name: 'sqlite',
      sqlite,
      location: file,
      async close() {
        await sqlite.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export const POSTGRES: Engine = {
  name: 'postgresql',
  skip: pgSkip,
  async open() {
    const made = await createPgDatabase();
    const pg = await openPgDatabase({ url: made.url });
    return {
      name: 'postgresql',
      pg,
      location: made.url,
      async close() {
        await pg.close();
        await made.drop();
      },
    };
  },
};

export const ENGINES: readonly Engine[] = [SQLITE, POSTGRES];
