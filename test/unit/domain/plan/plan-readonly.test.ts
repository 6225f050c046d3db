import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Plan } from '../../../../src/domain/plan/plan.ts';
import { moveCursor } from '../../../../src/domain/plan/plan-progress.ts';

/**
 * Outside src/domain a plan is deeply read-only. The `@ts-expect-error` lines are the test: tsc
 * (`npx tsc -p tsconfig.json --noEmit`, which includes test/) fails if any of them compiles, i.e. if
 * the plan's type lets code outside the domain write a field, a nested field or an array.
 */
function writesOutsideTheDomain(plan: Plan): void {
  // @ts-expect-error the cursor moves only through moveCursor
  plan.cursor = 3;
  // @ts-expect-error phase and state move only through the state machine
  plan.state = 'complete';
  // @ts-expect-error nested: the usage counts only through countToolCall / countModelUsage
  plan.usage.toolCalls++;
  // @ts-expect-error nested in an array: a sandbox changes only through replaceSandbox
  plan.sandboxes[0]!.root = '/elsewhere';
  // @ts-expect-error arrays cannot grow: addSandbox
  plan.sandboxes.push({ resource: 'r', kind: 'copy', root: '/r', source: '/s', baseCommit: 'c' });
  // @ts-expect-error a record's entries cannot be set
  plan.tasks.execute = 'T';
}

describe('a plan outside the domain', () => {
  it('is changed through the domain functions, which the type allows', () => {
    const plan = { id: 'P', cursor: 0 } as Plan;
    moveCursor(plan, 2);
    assert.equal(plan.cursor, 2);
    assert.equal(typeof writesOutsideTheDomain, 'function');
  });
});
