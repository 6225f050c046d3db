/** The Application layer's public surface (its only barrel). */
export type { ServiceFacade } from './service-facade.ts';
export type { Principal } from './ports/principal.ts';
export { LOCAL_PRINCIPAL, makePrincipal, namespacesOf, roleIn, systemPrincipalFor } from './ports/principal.ts';
export type { Actor, ActorCatalog, ActorTurn } from './ports/actor.port.ts';
export type { Logger } from './ports/logger.port.ts';
export { silentLogger } from './ports/logger.port.ts';
export {
  NO_TRACER,
  traced,
  type SpanOptions,
  type TraceAttributes,
  type TraceSpan,
  type Tracer,
} from './ports/tracer.port.ts';
export { currentRequest, inRequestScope, type RequestScope } from './request-scope.ts';
export type {
  TaskRepository,
  StoredTask,
  StoredTaskView,
  TaskListQuery,
  TaskRef,
  TaskPage,
  TaskExpiry,
  MessageKey,
  MessageKeyHit,
  RunningTask,
} from './ports/task.repository.port.ts';
export type {
  SessionRepository,
  SessionPage,
  SessionCursor,
  SessionSettings,
  ForkedTurn,
} from './ports/session.repository.port.ts';
export type { PushConfigRepository, StoredPushConfig } from './ports/push-config.repository.port.ts';
export type { WebhookSender } from './ports/webhook.port.ts';
export type { EgressPolicy } from './ports/egress.port.ts';
export type { RunnerRegistry } from './ports/runner.port.ts';
export type { PushOutbox, OutboxEntry, OutboxTarget } from './ports/push-outbox.port.ts';
export type { PushScheduler, PushDrain, PushDrainResult } from './ports/push-scheduler.port.ts';
export { settleStrandedWork } from './tasks/stranded-work.ts';
export type { PlanRepository, PlanListQuery, PlanRecords } from './ports/plan.repository.port.ts';
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
  CommandOutput,
  CommandOutputChunk,
  ToolPreview,
} from './ports/sandbox.port.ts';
export { KEPT_OUTPUT_BYTES } from './ports/sandbox.port.ts';
export type { TurnCheckpoints, TurnRef } from './ports/turn-checkpoints.port.ts';
export type { FileHistory, SnapshotDiff } from './ports/file-history.port.ts';
export type { TurnChangeRecord, TurnChangeRepository } from './ports/turn-change.repository.port.ts';
export type { SystemProbe, DiagnosticCheck } from './ports/system.port.ts';
export type { StreamItem, SendInput } from './tasks/task.service.ts';
export { builtinActorsByModel } from './actors/builtin-actors.ts';

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
} from './ports/registry.repository.port.ts';
export type { CapabilityGrant, GrantRepository } from './ports/grant.repository.port.ts';
export { RetentionService, type RetentionPolicy } from './system/retention.service.ts';
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
} from './ports/language-model.port.ts';
export { McpUnavailable, type McpCallResult, type McpHub, type McpToolInfo, type McpUse } from './ports/mcp.port.ts';
export type { PendingCalls, Transcript, TranscriptStore } from './ports/transcript.port.ts';
export type {
  FileInventory,
  FileListing,
  FileRead,
  GitRecency,
  GlobVerdict,
  InventoryEntry,
} from './ports/file-inventory.port.ts';
export { ContextService, type ContextPlan, type ContextServiceDeps } from './context/context.service.ts';
export { AuditService, type AuditEntry, type AuditListInput, type AuditRecorder } from './accounts/audit.service.ts';
export { CapabilityService, type TrustSettings } from './registry/capability.service.ts';
export { apiKeyId, isJwtShaped, RESERVED_USER_NAMES, serverTokenId } from './accounts/credential-formats.ts';
export {
  AuthenticationService,
  type AuthenticationServiceDeps,
  type AuthGrant,
  type AuthInput,
} from './accounts/authentication.service.ts';
export { JwtSignIn, type JwtSignInDeps } from './accounts/jwt-sign-in.service.ts';
export { QuotaService, type LimitsView, type QuotaDeps } from './accounts/quota.service.ts';
export type { NamespaceLimitsRepository, StoredLimits, UsageCounter, UsageLedger } from './ports/quota.port.ts';
export {
  BOOTSTRAP_ADMIN,
  SERVER_TOKEN_KEY_NAME,
  UserService,
  type UserServiceDeps,
  type UserView,
  type WhoAmI,
} from './accounts/user.service.ts';
export {
  ApiKeyService,
  type ApiKeyServiceDeps,
  type KeyView,
  type NewKey,
  type NewKeyInput,
} from './accounts/api-key.service.ts';
export {
  AUDIT_EVENTS,
  type AuditEvent,
  type AuditEventKind,
  type AuditLog,
  type AuditQuery,
} from './ports/audit.port.ts';
export type {
  AccountRepository,
  ApiKeyRecord,
  KeyHasher,
  KeyLookup,
  UserRecord,
} from './ports/account.repository.port.ts';
export type { JwtVerifier, VerifiedToken } from './ports/jwt-verifier.port.ts';
export type {
  RemoteConnection,
  RemoteConnectionStore,
  RemoteEntity,
  RemoteWriteResult,
  SyncBase,
  SyncRemote,
  SyncRemoteFactory,
  SyncStateStore,
} from './ports/sync.port.ts';
export { SyncService } from './sync/sync.service.ts';
export { syncStateOf, type SyncEntityState, type SyncEntityStatus } from './sync/sync-state.ts';
export type { SyncDeps } from './sync/sync.types.ts';
export { namespaceNotFound } from './registry/namespace.service.ts';
export type { HookInvocation, HookOutcome, HookRunner } from './ports/hook-runner.port.ts';
export { HookService, type HookContext, type HookRun, type HookVeto } from './hooks/hook.service.ts';
export {
  SecretUnreadable,
  type SecretCipher,
  type SecretStore,
  type SecretSummary,
  type SecretWrite,
  type StoredSecret,
} from './ports/secret-store.port.ts';
export {
  SecretService,
  type SecretList,
  type SecretServiceDeps,
  type SecretSetResult,
} from './secrets/secret.service.ts';
