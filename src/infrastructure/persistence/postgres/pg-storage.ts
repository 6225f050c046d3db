import type { DiagnosticCheck } from '../../../application/index.js';
import { pgStorageChecks } from '../../system/pg-storage.checks.js';
import { PgBossPushScheduler } from '../../push/pg-boss.push-scheduler.js';
import type { Storage, StorageOptions } from '../storage.js';
import { PgAccountRepository } from './pg-account.repository.js';
import { PgAuditLog } from './pg-audit.log.js';
import { openPgDatabase, type PgDatabase } from './pg-database.js';
import { PgPlanRepository } from './pg-plan.repository.js';
import { PgPushConfigRepository } from './pg-push-config.repository.js';
import { PgPushOutboxRepository } from './pg-push-outbox.repository.js';
import { PgNamespaceRepository, PgRegistryRepository } from './pg-registry.repository.js';
import { GrantStore } from '../rows/grant.store.js';
import { pgRunner } from './pg-runner.js';
import { PgRunnerRegistry } from './pg-runner.registry.js';
import { PgSecretRepository } from './pg-secret.repository.js';
import { PgSessionRepository } from './pg-session.repository.js';
import { PgSyncStateStore } from './pg-sync-state.store.js';
import { PgTaskRepository } from './pg-task.repository.js';
import { PgTranscriptStore } from './pg-transcript.store.js';

export interface PgStorageOptions extends StorageOptions {
  url: string;
  poolSize?: number | undefined;
}

/** Server mode on PostgreSQL: every store in one shared database (one or more instances). */
export interface PgStorage extends Storage {
  readonly engine: 'postgresql';
  readonly db: PgDatabase;
}

export async function openPgStorage(opts: PgStorageOptions): Promise<PgStorage> {
  const db = await openPgDatabase({ url: opts.url, logger: opts.logger, poolSize: opts.poolSize });
  const runners = new PgRunnerRegistry(db, { id: opts.runnerId, logger: opts.logger, leaseMs: opts.leaseMs });
  // Push deliveries are claimed through a pg-boss queue, so each attempt happens on one instance.
  let pushScheduler: PgBossPushScheduler;
  try {
    pushScheduler = await PgBossPushScheduler.open({ url: opts.url, logger: opts.logger });
  } catch (err) {
    await db.close();
    throw db.failures.map(err);
  }
  return {
    engine: 'postgresql',
    location: db.displayUrl,
    db,
    tasks: new PgTaskRepository(db, { runnerId: runners.self }),
    sessions: new PgSessionRepository(db),
    pushConfigs: new PgPushConfigRepository(db),
    pushOutbox: new PgPushOutboxRepository(db, runners.self),
    registry: new PgRegistryRepository(db),
    namespaces: new PgNamespaceRepository(db),
    grants: new GrantStore(pgRunner(db)),
    plans: new PgPlanRepository(db),
    transcripts: new PgTranscriptStore(db),
    audit: new PgAuditLog(db),
    syncState: new PgSyncStateStore(db),
    accounts: new PgAccountRepository(db),
    secrets: new PgSecretRepository(db),
    runners,
    ping: () => db.run(async (k) => void (await k.selectNoFrom((eb) => eb.lit(1).as('one')).execute())),
    checks: (): Promise<DiagnosticCheck[]> => pgStorageChecks(db, { leaseMs: opts.leaseMs }),
    pushScheduler,
    close: () => db.close(),
  };
}
