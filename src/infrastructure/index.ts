/** The Infrastructure layer's public surface (its only barrel), for the composition root. */
export {
  openDatabase,
  param,
  SqliteDatabase,
  type OpenDatabaseOptions,
  type Params,
  type Statement,
} from './persistence/database.ts';
export { type DB } from './persistence/database-schema.ts';
export { createMigrator, migrateToLatest, migrationStatus, type MigrationStatus } from './persistence/migrator.ts';
export { backfillTaskCounts, MIGRATIONS } from './persistence/migrations/index.ts';
export { SqliteTaskRepository } from './persistence/sqlite-task.repository.ts';
export { SqliteRunnerRegistry } from './persistence/sqlite-runner.registry.ts';
export { SqliteSessionRepository } from './persistence/sqlite-session.repository.ts';
export { SqlitePushConfigRepository } from './persistence/sqlite-push-config.repository.ts';
export { SqlitePushOutboxRepository } from './persistence/sqlite-push-outbox.repository.ts';
export { HostSystemProbe, type SystemProbeOptions, type ProbedStorage } from './system/system.probe.ts';
export type { Storage, StorageOptions, LeasedRunnerRegistry } from './persistence/storage.ts';
export { openSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from './persistence/sqlite-storage.ts';
export { HttpWebhookSender, type HttpWebhookSenderOptions } from './push/http-webhook.sender.ts';
export {
  EgressGuard,
  EgressRefusedError,
  egressRefusalOf,
  type EgressGuardOptions,
  type EgressLookup,
} from './net/egress-guard.ts';
export {
  EgressAllowlist,
  EgressAllowlistError,
  parseEgressAllowEntry,
  type EgressAllowEntry,
} from './net/egress-allowlist.ts';
export { ipBytes, isRefusedAddress, refusedAddressClass } from './net/ip-ranges.ts';
export { SqliteRegistryRepository, SqliteNamespaceRepository } from './persistence/sqlite-registry.repository.ts';
export { FsResourceInspector } from './system/fs-resource.inspector.ts';
export { SqlitePlanRepository } from './persistence/sqlite-plan.repository.ts';
export { GitSandboxManager, type GitSandboxManagerOptions } from './sandbox/git-sandbox.manager.ts';
export { GitRemotes, type GitRemotesOptions } from './sandbox/git-remote.ts';
export { GitError } from './sandbox/git.ts';
export { ShadowHistory, type ShadowHistoryOptions } from './sandbox/shadow-history.ts';
export { BuiltinToolRunner } from './tools/builtin-tool.runner.ts';
export { CommandConfinement, type ConfinementSource } from './tools/confinement.ts';
export {
  ConfinementUnavailableError,
  DEFAULT_COMMAND_LIMITS,
  INSTALL_HINT,
  type CommandLimits,
  type ConfinementSettings,
  type NetworkAccess,
} from './tools/confinement.types.ts';
export { maskedPaths, readOnlyPathProblem, type ReadOnlyPath, type SystemView } from './tools/confinement-view.ts';
export { SqliteTranscriptStore } from './persistence/sqlite-transcript.store.ts';
export { AiSdkLanguageModels, type AiSdkLanguageModelsOptions } from './llm/ai-sdk.models.ts';
export { EnvFileApiKeys, type EnvFileApiKeysOptions } from './llm/api-keys.ts';
export { GptTokenCounter } from './llm/token-counter.ts';
export { AjvSchemaValidator } from './llm/schema-validator.ts';
export { SdkMcpHub, type SdkMcpHubOptions } from './mcp/sdk-mcp.hub.ts';
export { FsFileInventory, type FsFileInventoryOptions } from './context/fs-file.inventory.ts';
export { SqliteAuditLog } from './persistence/sqlite-audit.log.ts';
export {
  JoseJwtVerifier,
  discoverOidc,
  normaliseUsername,
  oidcMetadataUrl,
  rolesFromClaim,
  tokenIdOf,
  type JoseJwtVerifierOptions,
  type OidcDiscovery,
} from './auth/jose-jwt.verifier.ts';
export { SqliteSyncStateStore } from './persistence/sqlite-sync-state.store.ts';
export { FileRemoteConnectionStore } from './persistence/file-remote-connection.store.ts';
export { SqliteAccountRepository } from './persistence/sqlite-account.repository.ts';
export { ScryptKeyHasher, type ScryptKeyHasherOptions } from './auth/scrypt-key.hasher.ts';
export { isPostgresUrl, redactUrl } from './persistence/postgres/pg-url.ts';
import type { PgStorage, PgStorageOptions } from './persistence/postgres/pg-storage.ts';
export type { PgStorage, PgStorageOptions };

/**
 * Opens the PostgreSQL storage. Its modules (pg, pg-boss with luxon and cron-parser) load only
 * here, when a database URL is given: an agent on SQLite, such as every local one, never pays for them.
 */
export async function openPgStorage(opts: PgStorageOptions): Promise<PgStorage> {
  return (await import('./persistence/postgres/pg-storage.ts')).openPgStorage(opts);
}
export { LocalHookRunner, type LocalHookRunnerOptions } from './hooks/local-hook.runner.ts';
export { SqliteSecretRepository } from './persistence/sqlite-secret.repository.ts';
export { AesGcmSecretCipher, type AesGcmSecretCipherOptions } from './secrets/aes-gcm.cipher.ts';
export {
  SECRET_KEY_BYTES,
  SecretKeyFileError,
  readOrCreateSecretKeyFile,
  readSecretKeyFile,
} from './secrets/secret-key.file.ts';
export { compareMigrations, MIGRATION_NAMES, type MigrationComparison } from './persistence/migrator.ts';
export { MaintenanceError, type MaintenanceProblem } from './persistence/maintenance/maintenance-error.ts';
export {
  backupSqlite,
  checkSqliteBackup,
  restoreSqlite,
  sqliteAppliedMigrations,
  sqliteLiveRunners,
  type LiveRunner,
} from './persistence/maintenance/sqlite-maintenance.ts';
export { DEFAULT_LEASE_MS } from './persistence/runner-leases.ts';
/** PostgreSQL maintenance (migrate, pg_dump, pg_restore); its modules (pg) load only when asked for. */
export async function pgMaintenance(): Promise<typeof import('./persistence/maintenance/pg-maintenance.ts')> {
  return import('./persistence/maintenance/pg-maintenance.ts');
}
