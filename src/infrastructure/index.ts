/** The Infrastructure layer's public surface (its only barrel), for the composition root. */
export {
  openDatabase,
  param,
  SqliteDatabase,
  type DB,
  type OpenDatabaseOptions,
  type Params,
  type Statement,
} from './persistence/database.js';
export {
  backfillTaskCounts,
  createMigrator,
  migrateToLatest,
  migrationStatus,
  MIGRATIONS,
  type MigrationStatus,
} from './persistence/migrations.js';
export { SqliteTaskRepository } from './persistence/sqlite-task.repository.js';
export { SqliteRunnerRegistry } from './persistence/sqlite-runner.registry.js';
export { SqliteSessionRepository } from './persistence/sqlite-session.repository.js';
export { SqlitePushConfigRepository } from './persistence/sqlite-push-config.repository.js';
export { SqlitePushOutboxRepository } from './persistence/sqlite-push-outbox.repository.js';
export { HostSystemProbe, type SystemProbeOptions, type ProbedStorage } from './system/system.probe.js';
export type { Storage, StorageOptions, LeasedRunnerRegistry } from './persistence/storage.js';
export { openSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from './persistence/sqlite-storage.js';
export { HttpWebhookSender, type HttpWebhookSenderOptions } from './push/http-webhook.sender.js';
export {
  EgressGuard,
  EgressRefusedError,
  egressRefusalOf,
  type EgressGuardOptions,
  type EgressLookup,
} from './net/egress-guard.js';
export {
  EgressAllowlist,
  EgressAllowlistError,
  parseEgressAllowEntry,
  type EgressAllowEntry,
} from './net/egress-allowlist.js';
export { ipBytes, isRefusedAddress, refusedAddressClass } from './net/ip-ranges.js';
export { SqliteRegistryRepository, SqliteNamespaceRepository } from './persistence/sqlite-registry.repository.js';
export { FsResourceInspector } from './system/fs-resource.inspector.js';
export { SqlitePlanRepository } from './persistence/sqlite-plan.repository.js';
export { GitSandboxManager, type GitSandboxManagerOptions } from './sandbox/git-sandbox.manager.js';
export { GitError } from './sandbox/git.js';
export { BuiltinToolRunner } from './tools/builtin-tool.runner.js';
export {
  CommandConfinement,
  ConfinementUnavailableError,
  DEFAULT_COMMAND_LIMITS,
  INSTALL_HINT,
  type CommandLimits,
  type ConfinementSettings,
  type NetworkAccess,
} from './tools/confinement.js';
export { maskedPaths, readOnlyPathProblem, type ReadOnlyPath, type SystemView } from './tools/confinement-view.js';
export { SqliteTranscriptStore } from './persistence/sqlite-transcript.store.js';
export { AiSdkLanguageModels, type AiSdkLanguageModelsOptions } from './llm/ai-sdk.models.js';
export { EnvFileApiKeys, type EnvFileApiKeysOptions } from './llm/api-keys.js';
export { GptTokenCounter } from './llm/token-counter.js';
export { AjvSchemaValidator } from './llm/schema-validator.js';
export { SdkMcpHub, type SdkMcpHubOptions } from './mcp/sdk-mcp.hub.js';
export { FsFileInventory, type FsFileInventoryOptions } from './context/fs-file.inventory.js';
export { SqliteAuditLog } from './persistence/sqlite-audit.log.js';
export {
  JoseJwtVerifier,
  discoverOidc,
  normaliseUsername,
  oidcMetadataUrl,
  rolesFromClaim,
  tokenIdOf,
  type JoseJwtVerifierOptions,
  type OidcDiscovery,
} from './auth/jose-jwt.verifier.js';
export { SqliteSyncStateStore } from './persistence/sqlite-sync-state.store.js';
export { FileRemoteConnectionStore } from './persistence/file-remote-connection.store.js';
export { SqliteAccountRepository } from './persistence/sqlite-account.repository.js';
export { ScryptKeyHasher, type ScryptKeyHasherOptions } from './auth/scrypt-key.hasher.js';
export { isPostgresUrl, redactUrl } from './persistence/postgres/pg-url.js';
import type { PgStorage, PgStorageOptions } from './persistence/postgres/pg-storage.js';
export type { PgStorage, PgStorageOptions };

/**
 * Opens the PostgreSQL storage. Its modules (pg, pg-boss with luxon and cron-parser) load only
 * here, when a database URL is given: an agent on SQLite, such as every local one, never pays for them.
 */
export async function openPgStorage(opts: PgStorageOptions): Promise<PgStorage> {
  return (await import('./persistence/postgres/pg-storage.js')).openPgStorage(opts);
}
export { LocalHookRunner, type LocalHookRunnerOptions } from './hooks/local-hook.runner.js';
export { SqliteSecretRepository } from './persistence/sqlite-secret.repository.js';
export { AesGcmSecretCipher, type AesGcmSecretCipherOptions } from './secrets/aes-gcm.cipher.js';
export {
  SECRET_KEY_BYTES,
  SecretKeyFileError,
  readOrCreateSecretKeyFile,
  readSecretKeyFile,
} from './secrets/secret-key.file.js';
