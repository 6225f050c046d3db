import type { ContractFamily, MethodContract } from '../contract.ts';
import { ACCOUNT_METHODS } from './account.contract.ts';
import { CARD_METHODS } from './card.contract.ts';
import { CONTEXT_METHODS } from './context.contract.ts';
import { DISCOVERY_METHODS } from './discovery.contract.ts';
import { HEALTH_METHODS } from './health.contract.ts';
import { MESSAGE_METHODS } from './message.contract.ts';
import { NAMESPACE_METHODS } from './namespace.contract.ts';
import { PLAN_METHODS } from './plan.contract.ts';
import { PLAN_HOUSEKEEPING_METHODS } from './plan-housekeeping.contract.ts';
import { PUSH_METHODS } from './push.contract.ts';
import { REGISTRIES, RESOURCE_TYPE_METHODS } from './registry.contract.ts';
import { SECRET_METHODS } from './secret.contract.ts';
import { SESSION_METHODS } from './session.contract.ts';
import { SYNC_METHODS } from './sync.contract.ts';
import { TASK_METHODS } from './task.contract.ts';

/**
 * Every family of methods by the title the reference docs give it, in the table's order (the
 * agent card and OpenRPC list methods in this order). Each registry kind is a family of five rows.
 */
export const CONTRACT_FAMILIES: Readonly<Record<string, ContractFamily>> = {
  message: MESSAGE_METHODS,
  task: TASK_METHODS,
  push: PUSH_METHODS,
  card: CARD_METHODS,
  health: HEALTH_METHODS,
  session: SESSION_METHODS,
  ...Object.fromEntries(Object.entries(REGISTRIES).map(([kind, rows]) => [`registry: ${kind}`, rows])),
  'registry: resource types': RESOURCE_TYPE_METHODS,
  namespace: NAMESPACE_METHODS,
  plan: PLAN_METHODS,
  'plan housekeeping': PLAN_HOUSEKEEPING_METHODS,
  context: CONTEXT_METHODS,
  sync: SYNC_METHODS,
  account: ACCOUNT_METHODS,
  secret: SECRET_METHODS,
  discovery: DISCOVERY_METHODS,
};

/** Every method's contract, in the table's order (the server binds each one: see method-table.ts). */
export const CONTRACTS: readonly MethodContract[] = Object.values(CONTRACT_FAMILIES).flatMap((f) => Object.values(f));
