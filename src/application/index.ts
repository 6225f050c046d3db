/** The Application layer's public surface (its only barrel). */
export { createServiceFacade, type ServiceFacade } from './service-facade.js';
export type { Principal } from './ports/principal.js';
export { LOCAL_PRINCIPAL, makePrincipal, namespacesOf, roleIn, systemPrincipalFor } from './ports/principal.js';
export type { Actor, ActorCatalog, ActorTurn } from './ports/actor.port.js';
export type { Logger } from './ports/logger.port.js';
export { silentLogger } from './ports/logger.port.js';
export type {
  TaskRepository,
  StoredTask,
  StoredTaskView,
  TaskListQuery,
  TaskPage,
  TaskExpiry,
  MessageKey,
  MessageKeyHit,
  RunningTask,
} from './ports/task.repository.port.js';
export type { SessionRepository, SessionPage, SessionCursor, ForkedTurn } from './ports/session.repository.port.js';
export type { PushConfigRepository, StoredPushConfig } from './ports/push-config.repository.port.js';
export type { WebhookSender } from './ports/webhook.port.js';
export type { EgressPolicy } from './ports/egress.port.js';
export type { RunnerRegistry } from './ports/runner.port.js';
export type { PushOutbox, OutboxEntry, OutboxTarget } from './ports/push-outbox.port.js';
export type { PushScheduler, PushDrain, PushDrainResult } from './ports/push-scheduler.port.js';
export { settleStrandedWork } from './tasks/stranded-work.js';
export type { PlanRepository, PlanListQuery, PlanRecords } from './ports/plan.repository.port.js';
export type {
  SandboxInfo,
  SandboxManager,
  SandboxDiff,
  FileChange,
  ApplyOutcome,
  RebaseOutcome,
  ToolRunner,
  ToolCallRequest,
  ToolCallResult,
} from './ports/sandbox.port.js';
export type { SystemProbe, DiagnosticCheck } from './ports/system.port.js';
export type { StreamItem, SendInput } from './tasks/task.service.js';
export { builtinActorsByModel } from './actors/builtin-actors.js';

export type {
  RegistryRepository,
  RegistryListQuery,
  Referrer,
  NamespaceRepository,
  NamespaceRecord,
  NamespaceContents,
  Member,
  Role,
  PathFacts,
  ResourceInspector,
  PathScope,
  ResolvedPath,
} from './ports/registry.repository.port.js';
export type { CapabilityGrant, GrantRepository } from './ports/grant.repository.port.js';
export { RetentionService, type RetentionPolicy } from './system/retention.service.js';
export {
  ProviderFailure,
  PROVIDER_FAILURES,
  type ApiKeys,
  type ApiKeyStatus,
  type EndpointAccess,
  type EndpointCheck,
  type FinishReason,
  type LanguageModels,
  type ModelEvent,
  type ModelMessage,
  type ModelRequest,
  type ModelTool,
  type ModelToolCall,
  type ModelToolResult,
  type ModelUsage,
  type ProviderFailureKind,
  type SchemaValidator,
  type TokenCounter,
} from './ports/language-model.port.js';
export { McpUnavailable, type McpCallResult, type McpHub, type McpToolInfo, type McpUse } from './ports/mcp.port.js';
export type { PendingCalls, Transcript, TranscriptStore } from './ports/transcript.port.js';
export type {
  FileInventory,
  FileListing,
  FileRead,
  GitRecency,
  GlobVerdict,
  InventoryEntry,
} from './ports/file-inventory.port.js';
export { ContextService, type ContextPlan, type ContextServiceDeps } from './context/context.service.js';
export { AuditService, type AuditEntry, type AuditListInput } from './accounts/audit.service.js';
export { CapabilityService, type TrustSettings } from './registry/capability.service.js';
export {
  apiKeyId,
  AuthService,
  BOOTSTRAP_ADMIN,
  isJwtShaped,
  RESERVED_USER_NAMES,
  SERVER_TOKEN_KEY_NAME,
  serverTokenId,
  type AuthGrant,
  type AuthInput,
  type AuthServiceDeps,
  type KeyView,
  type NewKey,
  type UserView,
  type WhoAmI,
} from './accounts/auth.service.js';
export {
  AUDIT_EVENTS,
  type AuditEvent,
  type AuditEventKind,
  type AuditLog,
  type AuditQuery,
} from './ports/audit.port.js';
export type {
  AccountRepository,
  ApiKeyRecord,
  KeyHasher,
  KeyLookup,
  UserRecord,
} from './ports/account.repository.port.js';
export type { JwtVerifier, VerifiedToken } from './ports/jwt-verifier.port.js';
export type {
  RemoteConnection,
  RemoteConnectionStore,
  RemoteEntity,
  RemoteWriteResult,
  SyncBase,
  SyncRemote,
  SyncRemoteFactory,
  SyncStateStore,
} from './ports/sync.port.js';
export {
  SyncService,
  syncStateOf,
  type SyncDeps,
  type SyncEntityState,
  type SyncEntityStatus,
} from './sync/sync.service.js';
export { namespaceNotFound } from './registry/namespace.service.js';
export type { HookInvocation, HookOutcome, HookRunner } from './ports/hook-runner.port.js';
export { HookService, type HookContext, type HookRun, type HookVeto } from './hooks/hook.service.js';
export {
  SecretUnreadable,
  type SecretCipher,
  type SecretStore,
  type SecretSummary,
  type SecretWrite,
  type StoredSecret,
} from './ports/secret-store.port.js';
export {
  SecretService,
  type SecretList,
  type SecretServiceDeps,
  type SecretSetResult,
} from './secrets/secret.service.js';
