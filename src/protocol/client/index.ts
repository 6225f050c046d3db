/**
 * The CleverAgents A2A client, for the CLI and for third-party programs: `A2AClient` over stdio
 * (local mode) or HTTP (server mode), and the methods' contracts to call it with
 * (names, schemas, permission: nothing of the server's).
 */
export { A2AClient, type TypedStreamEvent } from './client.ts';
export { A2AClientError, A2ATransportError, type FieldViolationInfo } from './client-error.ts';
export type { WireReason } from '../jsonrpc/jsonrpc.errors.ts';
export { HttpClientTransport, type HttpTransportOptions } from './http.transport.ts';
export { StdioClientTransport, type StdioTransportOptions, type InitializeResult } from './stdio.transport.ts';
export { agentEnv } from './agent-env.ts';
export type { ClientTransport, ClientStreamEvent, RequestOptions } from './transport.ts';
// Every family of methods, whole: a row added to a contract file is the client's with nothing listed again.
export * from '../a2a/contracts/message.contract.ts';
export * from '../a2a/contracts/task.contract.ts';
export * from '../a2a/contracts/push.contract.ts';
export * from '../a2a/contracts/card.contract.ts';
export * from '../a2a/contracts/health.contract.ts';
export * from '../a2a/contracts/session.contract.ts';
export * from '../a2a/contracts/registry.contract.ts';
export * from '../a2a/contracts/namespace.contract.ts';
export * from '../a2a/contracts/plan.contract.ts';
export * from '../a2a/contracts/plan-housekeeping.contract.ts';
export * from '../a2a/contracts/context.contract.ts';
export * from '../a2a/contracts/sync.contract.ts';
export * from '../a2a/contracts/account.contract.ts';
export * from '../a2a/contracts/secret.contract.ts';
export * from '../a2a/contracts/discovery.contract.ts';
export { CONTRACTS, CONTRACT_FAMILIES } from '../a2a/contracts/index.ts';
export { CONTEXT_VIEWS, RANKINGS, CONTEXT_DEFAULTS, type ContextView } from '../../domain/context/context.ts';
export { REGISTRY_KINDS, PLURAL, type RegistryKind } from '../../domain/registry/entities.ts';
export { fallbackLine, fallbacksOf, type FallbackRecord } from '../../domain/registry/fallbacks.ts';
export type {
  ContractFamily,
  MethodContract,
  UnaryContract,
  StreamContract,
  ParamsOf,
  ResultOf,
} from '../a2a/contract.ts';
export type {
  Task,
  Message,
  Part,
  Artifact,
  TaskState,
  StreamResponse,
  TaskStatusUpdateEvent,
  TaskArtifactUpdateEvent,
} from '../../domain/a2a.model.ts';
export {
  CHAT_CONTEXT_MODES,
  type ChatContextMode,
  type Session,
  type TurnChange,
  type UndoOutcome,
} from '../../domain/session.ts';
/** What an execute task's `diff` artifact carries in its data part. */
export { StoredDiff } from '../../domain/plan/plan-views.ts';
/** A command's kept output, and its last lines as every front end shows them. */
export {
  outputTail,
  shownOutput,
  TAIL_LINES,
  type CommandOutput,
  type OutputTail,
} from '../../domain/plan/command-output.ts';

/** What went wrong, in words, whatever was thrown. */
export { messageOf } from '../../domain/errors.ts';

/** Following a task, and a plan's phase to its next stop, as every front end does. */
export { foldEvent, statusOf, watchTask, type TaskWatcher } from './task-follow.ts';
export {
  followPlan,
  planPhaseIn,
  planPhaseOf,
  type PlanFollowHandlers,
  type PlanPhase,
  type PlanRunError,
  type PlanStop,
} from './plan-follower.ts';
/** Approvals: the typed request a waiting task or plan carries, and the answer. */
export {
  ApprovalRequest,
  answerPlan,
  answerTask,
  approvalPart,
  approvalRequestOf,
  approvalWhat,
  dataOf,
  type ApprovalAnswer,
} from './approvals.ts';
/** A plan's diff file by file (`plan/diff`'s `files`), and one side of a file rebuilt from the other. */
export {
  applyHunks,
  diffPath,
  fileUnified,
  hunkTexts,
  type DiffFile,
  type DiffHunk,
  type DiffLine,
} from './plan-diff.ts';
/** Watching a plan a person looks at, across its phases, until it stops running or the view closes. */
export { runningTaskOf, watchPlan, type PlanWatcher, type WatchedPlanStatus } from './plan-watch.ts';
