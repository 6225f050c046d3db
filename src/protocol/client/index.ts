/**
 * The CleverAgents A2A client, for the CLI and for third-party programs: `A2AClient` over stdio
 * (local mode) or HTTP (server mode), and the method table rows to call it with.
 */
export { A2AClient, type TypedStreamEvent } from './client.js';
export { A2AClientError, A2ATransportError, type FieldViolationInfo } from './client-error.js';
export type { WireReason } from '../jsonrpc/errors.js';
export { HttpClientTransport, type HttpTransportOptions } from './http.transport.js';
export { StdioClientTransport, type StdioTransportOptions, type InitializeResult } from './stdio.transport.js';
export type { ClientTransport, ClientStreamEvent, RequestOptions } from './transport.js';
export { sendMessage, sendStreamingMessage } from '../a2a/methods/message.methods.js';
export { getTask, listTasks, cancelTask, subscribeToTask } from '../a2a/methods/task.methods.js';
export { createPushConfig, getPushConfig, listPushConfigs, deletePushConfig } from '../a2a/methods/push.methods.js';
export { getExtendedAgentCard } from '../a2a/methods/card.methods.js';
export { healthCheck, diagnosticsRun } from '../a2a/methods/health.methods.js';
export { sessionCreate, sessionList, sessionShow, sessionDelete } from '../a2a/methods/session.methods.js';
export { METHODS } from '../a2a/method-table.js';
export { REGISTRIES, actorRegistry, toolRegistry, skillRegistry, resourceRegistry, projectRegistry, actionRegistry, resourceTypeList, resourceTypeShow } from '../a2a/methods/registry.methods.js';
export type { RegistryMethods } from '../a2a/methods/registry.methods.js';
export { namespaceList, namespaceShow, namespaceMembers } from '../a2a/methods/namespace.methods.js';
export { rpcDiscover } from '../a2a/methods/discovery.methods.js';
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
  PLAN_METHODS,
} from '../a2a/methods/plan.methods.js';
export { REGISTRY_KINDS, PLURAL, type RegistryKind } from '../../domain/registry/entities.js';
export type { MethodDef, UnaryMethod, StreamMethod, ParamsOf, ResultOf } from '../a2a/method.js';
export type { Task, Message, Part, Artifact, TaskState, StreamResponse, TaskStatusUpdateEvent, TaskArtifactUpdateEvent } from '../../domain/a2a.model.js';
export type { Session } from '../../domain/session.js';
/** What an execute task's `diff` artifact carries in its data part. */
export { StoredDiff } from '../../domain/plan/plan-views.js';
