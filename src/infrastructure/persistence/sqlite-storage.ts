import type { DiagnosticCheck } from '../../application/index.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { SqliteAccountRepository } from './sqlite-account.repository.ts';
import { SqliteAuditLog } from './sqlite-audit.log.ts';
import { SqlitePlanRepository } from './sqlite-plan.repository.ts';
import { SqlitePushConfigRepository } from './sqlite-push-config.repository.ts';
import { SqlitePushOutboxRepository } from './sqlite-push-outbox.repository.ts';
import { SqliteNamespaceRepository, SqliteRegistryRepository } from './sqlite-registry.repository.ts';
import { GrantStore } from './rows/grant.store.ts';
import { QuotaTableStore } from './rows/quota.store.ts';
import { TurnChangeTableStore } from './rows/turn-change.store.ts';
import { sqliteRunner } from './rows/sql-runner.ts';
import { SqliteRunnerRegistry } from './sqlite-runner.registry.ts';
import { SqliteSecretRepository } from './sqlite-secret.repository.ts';
import { SqliteSessionRepository } from './sqlite-session.repository.ts';
import { SqliteSyncStateStore } from './sqlite-sync-state.store.ts';
import { SqliteTaskRepository } from './sqlite-task.repository.ts';
import { SqliteTranscriptStore } from './sqlite-transcript.store.ts';
import { sqliteStorageChecks } from '../system/system.probe.ts';
import type { Storage, StorageOptions } from './storage.ts';

export interface SqliteStorageOptions extends StorageOptions {
  /** The database file, or `:memory:`. */
  file: string;
  busyTimeoutMs?: number | undefined;
}

/** The embedded default: every store in one SQLite file. */
export interface SqliteStorage extends Storage {
  readonly engine: 'sqlite';
  readonly db: SqliteDatabase;
}

export async function openSqliteStorage(opts: SqliteStorageOptions): Promise<SqliteStorage> {
  const db = await openDatabase({ file: opts.file, logger: opts.logger, busyTimeoutMs: opts.busyTimeoutMs });
  const runners = new SqliteRunnerRegistry(db, { id: opts.runnerId, logger: opts.logger, leaseMs: opts.leaseMs });
  return {
    engine: 'sqlite',
    location: opts.file,
    db,
    tasks: new SqliteTaskRepository(db, { runnerId: runners.self }),
    sessions: new SqliteSessionRepository(db),
    pushConfigs: new SqlitePushConfigRepository(db),
    pushOutbox: new SqlitePushOutboxRepository(db, runners.self),
    registry: new SqliteRegistryRepository(db),
    namespaces: new SqliteNamespaceRepository(db),
    grants: new GrantStore(sqliteRunner(db)),
    plans: new SqlitePlanRepository(db),
    transcripts: new SqliteTranscriptStore(db),
    audit: new SqliteAuditLog(db),
    syncState: new SqliteSyncStateStore(db),
    turnChanges: new TurnChangeTableStore(sqliteRunner(db)),
    quota: new QuotaTableStore(sqliteRunner(db)),
    accounts: new SqliteAccountRepository(db),
    secrets: new SqliteSecretRepository(db),
    runners,
    ping: async () => {
      await db.exclusive(() => db.sqlite.prepare('select 1').get());
    },
    checks: (): Promise<DiagnosticCheck[]> => sqliteStorageChecks(db, opts.file),
    close: () => db.close(),
  };
}
