/**
 * Which A2A methods each CLI command calls. Every command is a thin renderer over these calls; a
 * test checks this table against the command tree and the method table, so a command without a
 * method (or a method users would expect a command for, without one) fails the build.
 */
import {
  cancelTask,
  diagnosticsRun,
  getExtendedAgentCard,
  getTask,
  healthCheck,
  listTasks,
  namespaceList,
  namespaceMembers,
  namespaceShow,
  REGISTRIES,
  resourceTypeList,
  resourceTypeShow,
  sendMessage,
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  sessionList,
  sessionShow,
  subscribeToTask,
} from '../../protocol/client/index.js';

const names = (...rows: ReadonlyArray<{ name: string }>): string[] => rows.map((r) => r.name);
const plan = (verb: string): string => `_cleveragents/plan/${verb}`;

const registryCommands = Object.fromEntries(
  Object.entries(REGISTRIES).flatMap(([kind, rows]) =>
    (['add', 'list', 'show', 'update', 'remove'] as const).map((verb) => [`${kind} ${verb}`, names(rows[verb])]),
  ),
);

export const COMMAND_METHODS: Readonly<Record<string, readonly string[]>> = {
  send: names(sendMessage, sendStreamingMessage, sessionCreate, sessionShow),
  chat: names(sendStreamingMessage, sessionCreate, sessionShow),
  'session create': names(sessionCreate),
  'session list': names(sessionList),
  'session show': names(sessionShow),
  'session delete': names(sessionDelete),
  'task get': names(getTask),
  'task list': names(listTasks),
  'task cancel': names(cancelTask),
  'task watch': names(subscribeToTask, getTask),
  ...Object.fromEntries(
    [
      'use',
      'execute',
      'apply',
      'prompt',
      'approve',
      'reject',
      'cancel',
      'status',
      'tree',
      'explain',
      'correct',
      'diff',
      'artifacts',
      'rollback',
      'list',
    ].map((v) => [`plan ${v}`, [plan(v)]]),
  ),
  ...registryCommands,
  'resource type list': names(resourceTypeList),
  'resource type show': names(resourceTypeShow),
  'namespace list': names(namespaceList),
  'namespace show': names(namespaceShow),
  'namespace members': names(namespaceMembers),
  card: names(getExtendedAgentCard),
  health: names(healthCheck),
  diagnostics: names(diagnosticsRun),
  demo: [
    ...names(REGISTRIES.resource.add, REGISTRIES.project.add),
    plan('use'),
    plan('execute'),
    plan('diff'),
    plan('apply'),
  ],
};

/** Commands that are not a client of a method: `serve` is the server itself. */
export const SERVER_COMMANDS: readonly string[] = ['serve'];

/** Methods meant for programs rather than a person at a terminal, with why. */
export const NO_COMMAND_EXPECTED: Readonly<Record<string, string>> = {
  CreateTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  GetTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  ListTaskPushNotificationConfigs: 'webhooks are registered by the programs that receive them',
  DeleteTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  'rpc.discover': 'the OpenRPC document is for tools (also at GET /openrpc.json)',
};
