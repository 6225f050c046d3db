import type { MethodContract } from '../contract.ts';
import { ACCOUNT_CONTRACTS } from './account.contract.ts';
import { getExtendedAgentCard } from './card.contract.ts';
import { CONTEXT_CONTRACTS } from './context.contract.ts';
import { rpcDiscover } from './discovery.contract.ts';
import { diagnosticsRun, healthCheck } from './health.contract.ts';
import { sendMessage, sendStreamingMessage } from './message.contract.ts';
import {
  NAMESPACE_GRANT_CONTRACTS,
  NAMESPACE_MANAGEMENT_CONTRACTS,
  namespaceList,
  namespaceMembers,
  namespaceShow,
} from './namespace.contract.ts';
import { PLAN_CONTRACTS } from './plan.contract.ts';
import { PLAN_HOUSEKEEPING_CONTRACTS } from './plan-housekeeping.contract.ts';
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from './push.contract.ts';
import { REGISTRIES, resourceTypeList, resourceTypeShow } from './registry.contract.ts';
import { SECRET_CONTRACTS } from './secret.contract.ts';
import {
  sessionCompact,
  sessionCreate,
  sessionDelete,
  sessionFork,
  sessionList,
  sessionResume,
  sessionShow,
  sessionUndo,
} from './session.contract.ts';
import { SYNC_CONTRACTS } from './sync.contract.ts';
import { cancelTask, getTask, listTasks, subscribeToTask } from './task.contract.ts';

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
  sessionUndo,
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
