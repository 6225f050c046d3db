import type { MethodContract } from '../contract.js';
import { ACCOUNT_CONTRACTS } from './account.contract.js';
import { getExtendedAgentCard } from './card.contract.js';
import { CONTEXT_CONTRACTS } from './context.contract.js';
import { rpcDiscover } from './discovery.contract.js';
import { diagnosticsRun, healthCheck } from './health.contract.js';
import { sendMessage, sendStreamingMessage } from './message.contract.js';
import {
  NAMESPACE_GRANT_CONTRACTS,
  NAMESPACE_MANAGEMENT_CONTRACTS,
  namespaceList,
  namespaceMembers,
  namespaceShow,
} from './namespace.contract.js';
import { PLAN_CONTRACTS } from './plan.contract.js';
import { PLAN_HOUSEKEEPING_CONTRACTS } from './plan-housekeeping.contract.js';
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from './push.contract.js';
import { REGISTRIES, resourceTypeList, resourceTypeShow } from './registry.contract.js';
import { SECRET_CONTRACTS } from './secret.contract.js';
import {
  sessionCompact,
  sessionCreate,
  sessionDelete,
  sessionFork,
  sessionList,
  sessionResume,
  sessionShow,
} from './session.contract.js';
import { SYNC_CONTRACTS } from './sync.contract.js';
import { cancelTask, getTask, listTasks, subscribeToTask } from './task.contract.js';

/** Every method's contract, in the table's order (the server binds each one: see method-table.ts). */
export const CONTRACTS: readonly MethodContract[] = [
  sendMessage,
  sendStreamingMessage,
  getTask,
  listTasks,
  cancelTask,
  subscribeToTask,
  createPushConfig,
  getPushConfig,
  listPushConfigs,
  deletePushConfig,
  getExtendedAgentCard,
  healthCheck,
  diagnosticsRun,
  sessionCreate,
  sessionList,
  sessionShow,
  sessionDelete,
  sessionCompact,
  sessionFork,
  sessionResume,
  ...Object.values(REGISTRIES).flatMap((r) => [r.list, r.show, r.add, r.update, r.remove]),
  resourceTypeList,
  resourceTypeShow,
  namespaceList,
  namespaceShow,
  namespaceMembers,
  ...NAMESPACE_MANAGEMENT_CONTRACTS,
  ...NAMESPACE_GRANT_CONTRACTS,
  ...PLAN_CONTRACTS,
  ...PLAN_HOUSEKEEPING_CONTRACTS,
  ...CONTEXT_CONTRACTS,
  ...SYNC_CONTRACTS,
  ...ACCOUNT_CONTRACTS,
  ...SECRET_CONTRACTS,
  rpcDiscover,
] as MethodContract[];
