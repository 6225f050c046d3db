/** The storage half of the metrics' gauges: one count query each, run only when scraped. */
import type { SqliteStorage } from '../persistence/sqlite-storage.ts';
import type { PgStorage } from '../persistence/postgres/pg-storage.ts';
import { sqliteRunner, type SqlRunner } from '../persistence/rows/sql-runner.ts';
import { pgRunner } from '../persistence/postgres/pg-runner.ts';

export interface StorageGauges {
  outboxDepth(): Promise<number>;
  liveRunners(): Promise<number>;
  pool(): { total: number; idle: number; waiting: number } | undefined;
}

export function storageGauges(storage: SqliteStorage | PgStorage): StorageGauges {
  const sql: SqlRunner = storage.engine === 'sqlite' ? sqliteRunner(storage.db) : pgRunner(storage.db);
  return {
    async outboxDepth() {
      const row = await sql.run((k) =>
        k
          .selectFrom('push_outbox')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirst(),
      );
      return Number(row?.n ?? 0);
    },
    // The registry's own judgement (the same-host process check, expiry before the lease ends).
    liveRunners: () => storage.runners.liveCount(),
    pool() {
      if (storage.engine === 'sqlite') return undefined;
      const s = storage.db.poolStats();
      return { total: s.size, idle: s.idle, waiting: s.waiting };
    },
  };
}
