/** The plan state machine around a rebase onto a moved base: when it is allowed, and where it leads. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { type Plan, type PlanError } from '../../../../src/domain/plan/plan.ts';
import {
  allowedOperations,
  assertAllowed,
  canMove,
  isAllowed,
  markRebaseConflict,
  markRebased,
} from '../../../../src/domain/plan/plan-state.ts';
import { aPlan } from '../../../support/builders.ts';

const SANDBOX = {
  resource: 'local/r',
  kind: 'git-worktree' as const,
  root: '/s/P/local.r',
  source: '/repo',
  branch: 'cleveragents/plan-P',
  baseCommit: 'c0',
  targetBranch: 'main',
};

function plan(phase: Plan['phase'], state: Plan['state'], extra: Partial<Plan> = {}): Plan {
  return aPlan({ phase, state, cursor: 1, sandboxes: [SANDBOX], ...extra });
}

const CONFLICT: PlanError = { kind: 'conflict', message: 'conflicts in a.txt', recoverable: true, files: ['a.txt'] };

describe('rebase in the plan state machine', () => {
  it('is allowed once execute finished, after a failed apply, and on its own conflict; not otherwise', () => {
    assert.ok(isAllowed(plan('execute', 'complete'), 'rebase'));
    assert.ok(isAllowed(plan('apply', 'errored'), 'rebase'));
    assert.ok(isAllowed(plan('apply', 'constrained'), 'rebase'));
    assert.ok(isAllowed(plan('execute', 'errored', { error: CONFLICT }), 'rebase'));
    assert.ok(isAllowed(plan('execute', 'errored', { error: { ...CONFLICT, kind: 'tool' } }), 'execute'));
    assert.ok(allowedOperations(plan('apply', 'errored')).includes('rebase'));
    for (const p of [
      plan('execute', 'complete', { sandboxes: [] }),
      plan('strategize', 'complete', { sandboxes: [] }),
      plan('execute', 'processing'),
      plan('execute', 'queued'),
      plan('execute', 'errored', { error: { ...CONFLICT, kind: 'tool' } }),
      plan('apply', 'applied', { sandboxes: [] }),
      plan('execute', 'cancelled'),
      plan('apply', 'queued', { waiting: { kind: 'apply-approval', taskId: 't', request: { kind: 'apply' } } }),
    ]) {
      assert.equal(isAllowed(p, 'rebase'), false, `${p.phase}/${p.state}`);
      assert.throws(
        () => assertAllowed(p, 'rebase'),
        (e: unknown) =>
          e instanceof AppError && e.reason === 'INVALID_STATE' && /rebase needs a sandbox/.test(e.message),
      );
    }
  });

  it('a clean rebase of a failed apply makes the plan ready to apply again; execute/complete stays', () => {
    const failed = plan('apply', 'errored', { error: { ...CONFLICT, message: 'apply conflict' } });
    markRebased(failed);
    assert.equal(`${failed.phase}/${failed.state}`, 'execute/complete');
    assert.equal(failed.error, undefined);
    assert.ok(isAllowed(failed, 'apply'));
    const done = plan('execute', 'complete');
    markRebased(done);
    assert.equal(`${done.phase}/${done.state}`, 'execute/complete');
  });

  it('a conflict stops the plan execute/errored with the files; resolving it returns to execute/complete', () => {
    for (const [phase, state] of [
      ['execute', 'complete'],
      ['apply', 'errored'],
      ['apply', 'constrained'],
    ] as const) {
      const p = plan(phase, state);
      markRebaseConflict(p, CONFLICT);
      assert.equal(`${p.phase}/${p.state}`, 'execute/errored');
      assert.deepEqual(p.error, CONFLICT);
      assert.ok(isAllowed(p, 'prompt'), 'the execution actor can be asked to resolve it');
      assert.equal(isAllowed(p, 'apply'), false, 'a plan with conflict markers cannot be applied');
      assert.equal(isAllowed(p, 'execute'), false, 'nor executed to completion with its markers');
      markRebased(p);
      assert.equal(`${p.phase}/${p.state}`, 'execute/complete');
      assert.equal(p.error, undefined);
    }
    // Conflicting again while resolving stays errored.
    const again = plan('execute', 'errored', { error: CONFLICT });
    markRebaseConflict(again, CONFLICT);
    assert.equal(`${again.phase}/${again.state}`, 'execute/errored');
  });

  it('adds only the rebase moves to the table', () => {
    assert.ok(canMove('execute/complete', 'execute/errored'));
    assert.ok(canMove('apply/errored', 'execute/complete'));
    assert.ok(canMove('execute/errored', 'execute/complete'));
    assert.equal(canMove('execute/queued', 'execute/complete'), false);
    assert.equal(canMove('strategize/complete', 'execute/errored'), false);
    assert.equal(canMove('apply/applied', 'execute/complete'), false);
  });
});
