import type { DiagnosticCheck } from '../../../application/index.ts';
import { pgStorageChecks } from '../../system/pg-storage.checks.ts';
import { PgBossPushScheduler } from '../../push/pg-boss.push-scheduler.ts';
import type { Storage, StorageOptions } from '../storage.ts';
import { PgAccountRepository } from './pg-account.repository.ts';
import { PgAuditLog } from './pg-audit.log.ts';
import { openPgDatabase, type PgDatabase } from './pg-database.ts';
import { PgPlanRepository } from './pg-plan.repository.ts';
import { PgPushConfigRepository } from './pg-push-config.repository.ts';
import { PgPushOutboxRepository } from './pg-push-outbox.repository.ts';
import { PgNamespaceRepository, PgRegistryRepository } from './pg-registry.repository.ts';
import { GrantStore } from '../rows/grant.store.ts';
import { QuotaTableStore } from '../rows/quota.store.ts';
import { TurnChangeTableStore } from '../rows/turn-change.store.ts';
import { pgRunner } from './pg-runner.ts';
import { PgRunnerRegistry } from './pg-runner.registry.ts';
import { PgSecretRepository } from './pg-secret.repository.ts';
import { PgSessionRepository } from './pg-session.repository.ts';
import { PgSyncStateStore } from './pg-sync-state.store.ts';
import { PgTaskRepository } from './pg-task.repository.ts';
import { PgTranscriptStore } from './pg-transcript.store.ts';

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
    turnChanges: new TurnChangeTableStore(pgRunner(db)),
    quota: new QuotaTableStore(pgRunner(db)),
    accounts: new PgAccountRepository(db),
    secrets: new PgSecretRepository(db),
    runners,
    ping: () => db.run(async (k) => void (await k.selectNoFrom((eb) => eb.lit(1).as('one')).execute())),
    checks: (): Promise<DiagnosticCheck[]> => pgStorageChecks(db, { leaseMs: opts.leaseMs }),
    pushScheduler,
    close: () => db.close(),
  };
}
