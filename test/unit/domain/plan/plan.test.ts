/**
 * The plan model's state machine (issue #8, defect 5): the only writer of a plan's phase and state
 * (that nothing else writes them the compiler checks: a plan is read-only outside the domain, plan-readonly.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { type Plan } from '../../../../src/domain/plan/plan.ts';
import {
  awaitAnswer,
  canMove,
  cancelPlan,
  completePhase,
  declineApply,
  failPhase,
  markApplied,
  requeueExecute,
  startPhase,
  takeAnswer,
} from '../../../../src/domain/plan/plan-state.ts';
import { aPlan } from '../../../support/builders.ts';

function plan(phase: Plan['phase'], state: Plan['state'], extra: Partial<Plan> = {}): Plan {
  return aPlan({ phase, state, ...extra });
}

const refused = (fn: () => void, p: Plan, pattern: RegExp): void => {
  const before = JSON.stringify(p);
  assert.throws(
    fn,
    (err: unknown) => err instanceof AppError && err.reason === 'INVALID_STATE' && pattern.test(err.message),
  );
  assert.equal(JSON.stringify(p), before, 'a refused transition changes nothing');
};

describe('the plan state machine', () => {
  it('walks the lifecycle through its functions', () => {
    const p = plan('strategize', 'queued');
    startPhase(p, 'strategize');
    completePhase(p);
    startPhase(p, 'execute');
    awaitAnswer(p, { kind: 'tool-approval', taskId: 't1', request: { kind: 'tool-call' } });
    assert.equal(`${p.phase}/${p.state}`, 'execute/processing');
    assert.equal(takeAnswer(p, 't1').kind, 'tool-approval');
    completePhase(p);
    awaitAnswer(p, { kind: 'apply-approval', taskId: 't2', request: { kind: 'apply' } });
    assert.equal(`${p.phase}/${p.state}`, 'apply/queued');
    takeAnswer(p, 't2');
    startPhase(p, 'apply');
    markApplied(p, { at: '2026-12-01T00:00:00.000Z', commits: [] });
    assert.equal(`${p.phase}/${p.state}`, 'apply/applied');
  });

  it('refuses illegal transitions, naming both ends, and changes nothing', () => {
    // The bypass of defect 3: an apply on a plan that never executed.
    const fresh = plan('strategize', 'complete');
    refused(
      () => markApplied(fresh, { at: '', commits: [] }),
      fresh,
      /cannot go from strategize\/complete to apply\/applied/,
    );
    refused(() => startPhase(fresh, 'apply'), fresh, /strategize\/complete to apply\/processing/);
    refused(
      () => awaitAnswer(fresh, { kind: 'apply-approval', taskId: 't', request: { kind: 'apply' } }),
      fresh,
      /to apply\/queued/,
    );
    const applied = plan('apply', 'applied');
    refused(() => requeueExecute(applied), applied, /apply\/applied to execute\/queued/);
    refused(() => cancelPlan(applied, 'late'), applied, /apply\/applied to apply\/cancelled/);
    const cancelled = plan('execute', 'cancelled');
    refused(() => startPhase(cancelled, 'execute'), cancelled, /execute\/cancelled to execute\/processing/);
    refused(() => completePhase(cancelled), cancelled, /execute\/cancelled to execute\/complete/);
    const queued = plan('strategize', 'queued');
    refused(
      () => failPhase(queued, 'execute', { kind: 'tool', message: 'x', recoverable: true }),
      queued,
      /to execute\/errored/,
    );
    const done = plan('execute', 'complete');
    refused(() => declineApply(done), done, /execute\/complete to execute\/complete/);
    assert.equal(canMove('apply/processing', 'strategize/processing'), false, 'no correction while applying');
    assert.equal(canMove('execute/errored', 'execute/cancelled'), true);
  });

  it('takes an answer only on the task that waits, and only once', () => {
    const p = plan('execute', 'processing');
    awaitAnswer(p, { kind: 'tool-approval', taskId: 't1', request: { kind: 'tool-call' } });
    refused(() => takeAnswer(p, 'other'), p, /waits for an answer on task t1, not on task other/);
    takeAnswer(p, 't1');
    refused(() => takeAnswer(p, 't1'), p, /waits for no answer/);
  });
});
