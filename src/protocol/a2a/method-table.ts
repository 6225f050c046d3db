import { CONTRACTS } from './contracts/index.ts';
import type { MethodDef } from './method.ts';
import * as account from './methods/account.methods.ts';
import * as card from './methods/card.methods.ts';
import * as context from './methods/context.methods.ts';
import * as discovery from './methods/discovery.methods.ts';
import * as health from './methods/health.methods.ts';
import * as message from './methods/message.methods.ts';
import * as namespace from './methods/namespace.methods.ts';
import * as plan from './methods/plan.methods.ts';
import * as push from './methods/push.methods.ts';
import * as registry from './methods/registry.methods.ts';
import * as secret from './methods/secret.methods.ts';
import * as session from './methods/session.methods.ts';
import * as sync from './methods/sync.methods.ts';
import * as task from './methods/task.methods.ts';

const isBound = (v: unknown): v is MethodDef =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { name?: unknown }).name === 'string' &&
  typeof (v as { call?: unknown }).call === 'function';

/** What the methods/ modules export: rows bound to the facade (alone or in lists), by name. */
function boundRows(): Map<string, MethodDef> {
  const modules: ReadonlyArray<Record<string, unknown>> = [
    account,
    card,
    context,
    discovery,
    health,
    message,
    namespace,
    plan,
    push,
    registry,
    secret,
    session,
    sync,
    task,
  ];
  const rows = modules
    .flatMap((mod) => Object.values(mod).flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [v])))
    .filter(isBound);
  return new Map(rows.map((m) => [m.name, m]));
}

/** Every contract bound: a contract without a binding, or a binding without a contract, stops the start. */
function bindAll(): MethodDef[] {
  const bound = boundRows();
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
