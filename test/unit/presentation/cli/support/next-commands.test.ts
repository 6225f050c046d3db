import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PlanStatus } from '../../../../../src/presentation/cli/render/plan.render.ts';
import { nextCommands } from '../../../../../src/presentation/cli/support/plan-run.ts';

const errored = (over: Record<string, unknown>): PlanStatus =>
  ({
    planId: 'P1',
    phase: 'execute',
    state: 'errored',
    action: 'builtin/replace',
    projects: ['local/api'],
    allowed: ['execute', 'prompt', 'cancel'],
    ...over,
  }) as unknown as PlanStatus;

describe('nextCommands of an errored plan', () => {
  it('a stepped plan: execute again, or a new plan with other arguments — no guidance, which cannot change its steps', () => {
    assert.deepEqual(nextCommands(errored({})), [
      'agents plan execute P1',
      'agents plan use builtin/replace local/api --arg NAME=VALUE …',
    ]);
  });

  it('a plan with actors: execute again, or guidance for its actor', () => {
    assert.deepEqual(nextCommands(errored({ action: 'builtin/goal', actors: { strategy: 'a', execution: 'b' } })), [
      'agents plan execute P1',
      'agents plan prompt P1 "…"',
    ]);
  });
});
