/**
 * Builders of domain records for tests: a valid record with plain defaults, and what a test cares
 * about given as overrides (so a test names only what it is about).
 */
import type { Plan } from '../../src/domain/plan/plan.ts';

const AT = '2026-12-01T00:00:00.000Z';

/** A plan queued for strategize, one step, nothing used yet; `over` replaces any field. */
export function aPlan(over: Partial<Plan> = {}): Plan {
  const id = over.id ?? '01ARZ3NDEKTSV4RRFFQ69G5FAV';
  return {
    id,
    name: 'p',
    action: 'local/a',
    projects: ['local/p'],
    arguments: {},
    description: '',
    definitionOfDone: '',
    automationProfile: 'manual',
    phase: 'strategize',
    state: 'queued',
    attempt: 1,
    contextId: `plan-${id}`,
    tasks: {},
    owner: 'local',
    createdAt: AT,
    updatedAt: AT,
    budget: { maxToolCalls: 10, maxWallMs: 1000 },
    usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
    cursor: 0,
    stepsTotal: 1,
    sandboxes: [],
    ...over,
  };
}
