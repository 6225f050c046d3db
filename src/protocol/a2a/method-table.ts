import type { MethodDef } from './method.js';
import { getExtendedAgentCard } from './methods/card.methods.js';
import { diagnosticsRun, healthCheck } from './methods/health.methods.js';
import { sendMessage, sendStreamingMessage } from './methods/message.methods.js';
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from './methods/push.methods.js';
import { sessionCreate, sessionDelete, sessionList, sessionShow } from './methods/session.methods.js';
import { rpcDiscover } from './methods/discovery.methods.js';
import { PLAN_METHODS } from './methods/plan.methods.js';
import { namespaceList, namespaceMembers, namespaceShow } from './methods/namespace.methods.js';
import { REGISTRY_METHODS, resourceTypeList, resourceTypeShow } from './methods/registry.methods.js';
import { cancelTask, getTask, listTasks, subscribeToTask } from './methods/task.methods.js';

/** Every method the server serves: each contract bound to the facade. Absent here means -32601. */
export const METHODS: readonly MethodDef[] = [
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
  ...Object.values(REGISTRY_METHODS).flatMap((r) => [r.list, r.show, r.add, r.update, r.remove]),
  resourceTypeList,
  resourceTypeShow,
  namespaceList,
  namespaceShow,
  namespaceMembers,
  ...PLAN_METHODS,
  rpcDiscover,
] as MethodDef[];

export interface MethodLookup {
  /** Method rows by every name v1.0 callers may use (canonical names and the seed's aliases). */
  v1: ReadonlyMap<string, MethodDef>;
  /** Method rows by every name v0.3 callers may use (v0.3 names, seed aliases, extensions). */
  v03: ReadonlyMap<string, MethodDef>;
  all: readonly MethodDef[];
}

/** Builds the lookup maps, refusing a name or alias claimed twice. */
export function buildMethodTable(methods: readonly MethodDef[] = METHODS): MethodLookup {
  const v1 = new Map<string, MethodDef>();
  const v03 = new Map<string, MethodDef>();
  const claim = (map: Map<string, MethodDef>, name: string, m: MethodDef): void => {
    const prior = map.get(name);
    if (prior && prior !== m) throw new Error(`method name ${name} is claimed by both ${prior.name} and ${m.name}`);
    map.set(name, m);
  };
  for (const m of methods) {
    claim(v1, m.name, m);
    for (const a of m.aliases ?? []) claim(v1, a, m);
    if (m.surface === 'extension') claim(v03, m.name, m);
    else {
      if (m.v03?.name) claim(v03, m.v03.name, m);
      for (const a of m.aliases ?? []) claim(v03, a, m);
    }
  }
  return { v1, v03, all: methods };
}
