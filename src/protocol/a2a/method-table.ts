import { CONTRACTS } from './contracts/index.ts';
import type { MethodDef } from './method.ts';
import { ACCOUNT_ROWS } from './methods/account.methods.ts';
import { CARD_ROWS } from './methods/card.methods.ts';
import { CONTEXT_ROWS } from './methods/context.methods.ts';
import { DISCOVERY_ROWS } from './methods/discovery.methods.ts';
import { HEALTH_ROWS } from './methods/health.methods.ts';
import { MESSAGE_ROWS } from './methods/message.methods.ts';
import { NAMESPACE_ROWS } from './methods/namespace.methods.ts';
import { PLAN_HOUSEKEEPING_ROWS, PLAN_ROWS } from './methods/plan.methods.ts';
import { PUSH_ROWS } from './methods/push.methods.ts';
import { REGISTRY_ROWS, RESOURCE_TYPE_ROWS } from './methods/registry.methods.ts';
import { SECRET_ROWS } from './methods/secret.methods.ts';
import { SESSION_ROWS } from './methods/session.methods.ts';
import { SYNC_ROWS } from './methods/sync.methods.ts';
import { TASK_ROWS } from './methods/task.methods.ts';

/** Every family the server binds (methods/): a family left out leaves its contracts unbound, which stops the start. */
const BOUND_FAMILIES: ReadonlyArray<readonly MethodDef[]> = [
  MESSAGE_ROWS,
  TASK_ROWS,
  PUSH_ROWS,
  CARD_ROWS,
  HEALTH_ROWS,
  SESSION_ROWS,
  REGISTRY_ROWS,
  RESOURCE_TYPE_ROWS,
  NAMESPACE_ROWS,
  PLAN_ROWS,
  PLAN_HOUSEKEEPING_ROWS,
  CONTEXT_ROWS,
  SYNC_ROWS,
  ACCOUNT_ROWS,
  SECRET_ROWS,
  DISCOVERY_ROWS,
];

/**
 * Every contract bound exactly once: a contract without a binding, a binding without a contract,
 * or a method bound twice stops the start. The rows come out in the contracts' order.
 */
export function bindAll(families: ReadonlyArray<readonly MethodDef[]> = BOUND_FAMILIES): MethodDef[] {
  const bound = new Map<string, MethodDef>();
  for (const m of families.flat()) {
    if (bound.has(m.name)) throw new Error(`methods/ binds ${m.name} twice`);
    bound.set(m.name, m);
  }
  const out = CONTRACTS.map((c) => {
    const m = bound.get(c.name);
    if (!m) throw new Error(`the contract of ${c.name} has no binding in methods/`);
    return m;
  });
  if (bound.size !== out.length)
    throw new Error(`methods/ binds ${bound.size - out.length} row(s) that no contract lists`);
  return out;
}

/** Every method the server serves, in the contracts' order. Absent here means -32601. */
export const METHODS: readonly MethodDef[] = bindAll();

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
