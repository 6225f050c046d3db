/**
 * The CleverAgents A2A client, for the CLI and for third-party programs: `A2AClient` over stdio
 * (local mode) or HTTP (server mode), and the methods' contracts to call it with
 * (names, schemas, permission: nothing of the server's).
 */
export { A2AClient, type TypedStreamEvent } from './client.js';
export { A2AClientError, A2ATransportError, type FieldViolationInfo } from './client-error.js';
export type { WireReason } from '../jsonrpc/errors.js';
export { HttpClientTransport, type HttpTransportOptions } from './http.transport.js';
export { StdioClientTransport, type StdioTransportOptions, type InitializeResult } from './stdio.transport.js';
export { agentEnv } from './agent-env.js';
export type { ClientTransport, ClientStreamEvent, RequestOptions } from './transport.js';
export { sendMessage, sendStreamingMessage } from '../a2a/contracts/message.contract.js';
export { getTask, listTasks, cancelTask, subscribeToTask } from '../a2a/contracts/task.contract.js';
export { createPushConfig, getPushConfig, listPushConfigs, deletePushConfig } from '../a2a/contracts/push.contract.js';
export { getExtendedAgentCard } from '../a2a/contracts/card.contract.js';
export { healthCheck, diagnosticsRun } from '../a2a/contracts/health.contract.js';
export {
  sessionCreate,
  sessionList,
  sessionShow,
  sessionDelete,
  sessionCompact,
  sessionFork,
  sessionResume,
} from '../a2a/contracts/session.contract.js';
export { CONTRACTS } from '../a2a/contracts/index.js';
export {
  REGISTRIES,
  actorRegistry,
  toolRegistry,
  skillRegistry,
  resourceRegistry,
  projectRegistry,
  actionRegistry,
  automationProfileRegistry,
  hookRegistry,
  resourceTypeList,
  resourceTypeShow,
} from '../a2a/contracts/registry.contract.js';
export type {
  RegistryContracts,
  RegistryEntityOf,
  RegistryPageOf,
  RegistryShownOf,
} from '../a2a/contracts/registry.contract.js';
export {
  namespaceList,
  namespaceShow,
  namespaceMembers,
  namespaceCreate,
  namespaceDelete,
  namespaceAddMember,
  namespaceRemoveMember,
  namespaceSetRole,
  namespaceGrants,
  namespaceGrant,
  namespaceRevoke,
  NAMESPACE_MANAGEMENT_CONTRACTS,
} from '../a2a/contracts/namespace.contract.js';
export { rpcDiscover } from '../a2a/contracts/discovery.contract.js';
export {
  secretSet,
  secretList,
  secretRemove,
  SECRET_CONTRACTS,
  SECRET_VALUE_MAX_BYTES,
} from '../a2a/contracts/secret.contract.js';
export {
  whoami,
  userAdd,
  userList,
  userDisable,
  userEnable,
  keyCreate,
  keyList,
  keyRevoke,
  auditList,
  ACCOUNT_CONTRACTS,
} from '../a2a/contracts/account.contract.js';
export {
  planUse,
  planExecute,
  planApply,
  planCancel,
  planStatus,
  planTree,
  planExplain,
  planCorrect,
  planDiff,
  planArtifacts,
  planPrompt,
  planApprove,
  planReject,
  planRollback,
  planList,
  PLAN_CONTRACTS,
} from '../a2a/contracts/plan.contract.js';
export {
  planRebase,
  planDelete,
  planPrune,
  PLAN_HOUSEKEEPING_CONTRACTS,
} from '../a2a/contracts/plan-housekeeping.contract.js';
export {
  contextShow,
  contextSet,
  contextInspect,
  contextSimulate,
  CONTEXT_CONTRACTS,
} from '../a2a/contracts/context.contract.js';
export { CONTEXT_VIEWS, RANKINGS, CONTEXT_DEFAULTS, type ContextView } from '../../domain/context/context.js';
export { REGISTRY_KINDS, PLURAL, type RegistryKind } from '../../domain/registry/entities.js';
export { fallbackLine, fallbacksOf, type FallbackRecord } from '../../domain/registry/fallbacks.js';
export type { MethodContract, UnaryContract, StreamContract, ParamsOf, ResultOf } from '../a2a/contract.js';
export type {
  Task,
  Message,
  Part,
  Artifact,
  TaskState,
  StreamResponse,
  TaskStatusUpdateEvent,
  TaskArtifactUpdateEvent,
} from '../../domain/a2a.model.js';
export type { Session } from '../../domain/session.js';
/** What an execute task's `diff` artifact carries in its data part. */
export { StoredDiff } from '../../domain/plan/plan-views.js';
export {
  syncConnect,
  syncDisconnect,
  syncConnection,
  syncStatus,
  syncPull,
  syncPush,
  SyncResult,
} from '../a2a/contracts/sync.contract.js';
