import type { Plan, PlanRecord } from './plan.ts';

/**
 * The plan's record, to write. Outside the domain a plan is deeply read-only; the domain's
 * functions (plan-state.ts, plan-progress.ts) change it in place — the engine's in-memory copy is
 * the one every reader of a running plan sees — after checking the change. Only src/domain may
 * import this (a dependency-cruiser rule).
 */
export function writable(p: Plan): PlanRecord {
  return p as PlanRecord;
}
