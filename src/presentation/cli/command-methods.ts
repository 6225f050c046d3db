/**
 * Which A2A methods each CLI command calls. Every command is a thin renderer over these calls, and
 * this table is binding: a command's client refuses any method its row does not list
 * (declared-client.ts), and the end-to-end suites record every call each command makes and check
 * the table against it (test/support/cli-trace-check.ts). A test also checks the table against the
 * command tree and the method table, so a command without a method (or a method users would expect
 * a command for, without one) fails the build. Helpers that call methods for several commands
 * export their lists (FOLLOW_CALLS, PHASE_CALLS) next to the code that makes the calls.
 */
import {
  auditList,
  cancelTask,
  contextInspect,
  contextSet,
  contextShow,
  contextSimulate,
  diagnosticsRun,
  getExtendedAgentCard,
  getTask,
  healthCheck,
  keyCreate,
  keyList,
  keyRevoke,
  listTasks,
  namespaceAddMember,
  namespaceCreate,
  namespaceDelete,
  namespaceList,
  namespaceMembers,
  namespaceRemoveMember,
  namespaceSetRole,
  namespaceShow,
  planApply,
  planApprove,
  planArtifacts,
  planCancel,
  planCorrect,
  planDelete,
  planDiff,
  planExecute,
  planExplain,
  planList,
  planPrompt,
  planPrune,
  planRebase,
  planReject,
  planRollback,
  planStatus,
  planTree,
  planUse,
  REGISTRIES,
  resourceTypeList,
  resourceTypeShow,
  sendMessage,
  sendStreamingMessage,
  sessionCompact,
  sessionCreate,
  sessionDelete,
  sessionFork,
  sessionList,
  sessionResume,
  sessionShow,
  subscribeToTask,
  syncConnect,
  syncConnection,
  syncDisconnect,
  syncPull,
  syncPush,
  syncStatus,
  userAdd,
  userDisable,
  userEnable,
  userList,
  whoami,
} from '../../protocol/client/index.js';
import { PHASE_CALLS } from './support/plan-run.js';
import { PLAN_VIEW_CALLS } from '../tui/plan-controller.js';

const names = (...rows: ReadonlyArray<{ name: string }>): string[] => [...new Set(rows.map((r) => r.name))];

const registryCommands = Object.fromEntries(
  Object.entries(REGISTRIES).flatMap(([kind, rows]) =>
    (['add', 'list', 'show', 'update', 'remove'] as const).map((verb) => [`${kind} ${verb}`, names(rows[verb])]),
  ),
);

export const COMMAND_METHODS: Readonly<Record<string, readonly string[]>> = {
  send: names(sendMessage, sendStreamingMessage, sessionCreate, sessionShow),
  chat: names(sendStreamingMessage, sessionCreate, sessionShow, sessionResume),
  // The TUI's sessions list and chat, and its plans views (see tui/plan-controller.ts).
  tui: names(
    sessionList,
    sessionCreate,
    sessionDelete,
    sessionResume,
    sendStreamingMessage,
    cancelTask,
    ...PLAN_VIEW_CALLS,
  ),
  'actor run': names(sessionCreate, sendStreamingMessage, sessionDelete),
  'session create': names(sessionCreate),
  'session list': names(sessionList),
  'session show': names(sessionShow),
  'session delete': names(sessionDelete),
  'session compact': names(sessionCompact),
  'session fork': names(sessionFork),
  'task get': names(getTask),
  'task list': names(listTasks),
  'task cancel': names(cancelTask),
  'task watch': names(subscribeToTask, getTask),
  // The phase commands start a phase, then follow its task (answering approvals) and show the plan.
  'plan use': names(planUse, ...PHASE_CALLS, planTree),
  'plan execute': names(planExecute, ...PHASE_CALLS),
  'plan apply': names(planApply, ...PHASE_CALLS),
  'plan approve': names(planApprove, ...PHASE_CALLS),
  'plan reject': names(planReject, ...PHASE_CALLS),
  'plan prompt': names(planPrompt, ...PHASE_CALLS),
  'plan cancel': names(planCancel),
  'plan rebase': names(planRebase),
  'plan delete': names(planDelete),
  'plan prune': names(planPrune),
  'plan status': names(planStatus),
  'plan tree': names(planTree),
  'plan explain': names(planExplain),
  'plan correct': names(planCorrect),
  'plan diff': names(planDiff),
  'plan artifacts': names(planArtifacts),
  'plan rollback': names(planRollback),
  'plan list': names(planList),
  ...registryCommands,
  // `show` without a project prints the built-in defaults without a call.
  'project context show': names(contextShow),
  'project context set': names(contextSet),
  'project context inspect': names(contextInspect),
  'project context simulate': names(contextSimulate),
  // --mcp asks every skill with MCP servers for what they list.
  'tool list': names(REGISTRIES.tool.list, REGISTRIES.skill.list, REGISTRIES.skill.show),
  'resource type list': names(resourceTypeList),
  'resource type show': names(resourceTypeShow),
  'namespace list': names(namespaceList),
  'namespace show': names(namespaceShow),
  'namespace members': names(namespaceMembers),
  'namespace create': names(namespaceCreate),
  'namespace delete': names(namespaceDelete),
  'namespace add-member': names(namespaceAddMember),
  'namespace remove-member': names(namespaceRemoveMember),
  'namespace set-role': names(namespaceSetRole),
  // Sync runs in the local agent (which talks to the server): these always use the local agent.
  'sync status': names(syncStatus),
  'sync pull': names(syncPull),
  'sync push': names(syncPush),
  'server connect': names(syncConnect),
  'server disconnect': names(syncDisconnect),
  'server status': names(syncConnection),
  whoami: names(whoami),
  'key create': names(keyCreate),
  'key list': names(keyList),
  'key revoke': names(keyRevoke),
  'user add': names(userAdd),
  'user list': names(userList),
  'user disable': names(userDisable),
  'user enable': names(userEnable),
  'audit list': names(auditList),
  // The ACP bridge: a session per ACP session (its project found from the editor's cwd; listed, loaded and
  // deleted), turns streamed (or sent, to a backend that does not stream), approvals answered on the task, cancels.
  acp: names(
    sessionCreate,
    sessionShow,
    sessionList,
    sessionDelete,
    sendStreamingMessage,
    sendMessage,
    cancelTask,
    REGISTRIES.project.list,
    REGISTRIES.resource.list,
  ),
  // Verifies the key (or the device-flow token) before storing it.
  login: names(whoami),
  card: names(getExtendedAgentCard),
  health: names(healthCheck),
  diagnostics: names(diagnosticsRun),
  // The demo registers a sample resource and project (and removes them unless --keep), then runs a plan.
  demo: names(
    REGISTRIES.resource.add,
    REGISTRIES.project.add,
    REGISTRIES.resource.remove,
    REGISTRIES.project.remove,
    planUse,
    planExecute,
    planDiff,
    planApply,
    ...PHASE_CALLS,
    planTree,
  ),
};

/** Commands that are not a client of a method: `serve` is the server itself; `logout` only forgets a stored login. */
export const SERVER_COMMANDS: readonly string[] = ['serve', 'logout'];

/** Methods meant for programs rather than a person at a terminal, with why. */
export const NO_COMMAND_EXPECTED: Readonly<Record<string, string>> = {
  CreateTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  GetTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  ListTaskPushNotificationConfigs: 'webhooks are registered by the programs that receive them',
  DeleteTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  'rpc.discover': 'the OpenRPC document is for tools (also at GET /openrpc.json)',
};
