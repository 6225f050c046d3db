/**
 * The plan's changes besides phase and state, each through a domain function that refuses what
 * would make the record untrue — and the phase/state machine as a table.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PHASE_STATES, PHASES, type Plan } from '../../../../src/domain/plan/plan.ts';
import { canMove } from '../../../../src/domain/plan/plan-state.ts';
import {
  attachTask,
  countWrite,
  dropSandboxes,
  judgeDone,
  moveCursor,
  newAttempt,
  noteConfinement,
  replaceSandbox,
  revertTo,
  setBudget,
  setStepsTotal,
  setWallTime,
  startApply,
} from '../../../../src/domain/plan/plan-progress.ts';

const plan = (over: Partial<Plan> = {}): Plan =>
  ({
    id: 'P1',
    phase: 'execute',
    state: 'processing',
    cursor: 2,
    attempt: 1,
    stepsTotal: 3,
    tasks: {},
    usage: { toolCalls: 0, wallMs: 100, tokens: 0, costUsd: 0 },
    budget: { maxToolCalls: 10, maxWallMs: 1000 },
    sandboxes: [{ resource: 'local/a', kind: 'git-worktree', root: '/s', source: '/r', baseCommit: 'c1' }],
    ...over,
  }) as unknown as Plan;

describe('plan progress', () => {
  it('the cursor moves to any step, never below 0 or to a fraction; a write counts one', () => {
    const p = plan();
    moveCursor(p, 0);
    assert.equal(p.cursor, 0);
    assert.throws(() => moveCursor(p, -1), /the cursor cannot be -1/);
    assert.throws(() => moveCursor(p, 1.5), /the cursor cannot be 1\.5/);
    assert.equal(countWrite(p), 1);
    assert.equal(p.cursor, 1);
  });

  it('the definition of done is judged in execute only', () => {
    const p = plan();
    judgeDone(p, { met: true, by: 'assessment', assessment: 'ok', decisionId: 'd', at: 't' });
    assert.equal(p.done?.met, true);
    assert.throws(() => judgeDone(plan({ phase: 'apply' }), undefined), /judged in execute, not apply/);
  });

  it('a correction: a new attempt; a revert clears the error, a fresh one also what it waited for and done', () => {
    const p = plan({
      error: { kind: 'tool', message: 'x', recoverable: true },
      done: { met: false } as Plan['done'],
      waiting: { kind: 'tool-approval', taskId: 'T', decisionId: 'd', request: { kind: 'tool-call' } },
    });
    newAttempt(p);
    assert.equal(p.attempt, 2);
    revertTo(p, 1);
    assert.deepEqual([p.cursor, p.error, p.done?.met, p.waiting?.kind], [1, undefined, false, 'tool-approval']);
    revertTo(p, 0, { fresh: true });
    assert.deepEqual([p.cursor, p.done, p.waiting], [0, undefined, undefined]);
  });

  it('steps, tasks, apply, confinement, budgets, wall time and sandboxes', () => {
    const p = plan({ error: { kind: 'dirty', message: 'x', recoverable: true } });
    setStepsTotal(p, 4);
    assert.throws(() => setStepsTotal(p, -1), /cannot have -1 steps/);
    attachTask(p, 'execute', 'T2');
    startApply(p, 'T3');
    assert.deepEqual([p.stepsTotal, p.tasks.execute, p.tasks.apply, p.error], [4, 'T2', 'T3', undefined]);
    noteConfinement(p, 'confined');
    noteConfinement(p, 'none');
    noteConfinement(p, 'confined');
    assert.equal(p.confinement, 'none', 'unconfined once is recorded and stays');
    setBudget(p, { maxTokens: 500, maxToolCalls: undefined });
    assert.deepEqual([p.budget.maxTokens, p.budget.maxToolCalls], [500, 10]);
    assert.throws(() => setBudget(p, { maxCost: 0 }), /budget maxCost must be positive/);
    setWallTime(p, 50);
    assert.equal(p.usage.wallMs, 100, 'the wall time never goes back');
    setWallTime(p, 150);
    assert.equal(p.usage.wallMs, 150);
    replaceSandbox(p, 0, { ...p.sandboxes[0], baseCommit: 'c2' } as Plan['sandboxes'][number]);
    assert.equal(p.sandboxes[0]?.baseCommit, 'c2');
    assert.throws(
      () => replaceSandbox(p, 0, { ...p.sandboxes[0], resource: 'local/b' } as Plan['sandboxes'][number]),
      /not the sandbox of local\/b/,
    );
    assert.throws(() => dropSandboxes(p), /only a cancelled plan's sandboxes are removed/);
    const cancelled = plan({ state: 'cancelled' });
    dropSandboxes(cancelled);
    assert.deepEqual(cancelled.sandboxes, []);
  });
});

describe('the phase and state machine, as a table', () => {
  // Every move the plan may make (besides cancel, from anything unfinished); every other pair is refused.
  const REWORK = ['strategize/processing', 'execute/queued'];
  const ALLOWED: Record<string, string[]> = {
    'strategize/queued': ['strategize/processing'],
    'strategize/processing': [
      'strategize/processing',
      'strategize/complete',
      'strategize/errored',
      'strategize/constrained',
      'execute/queued',
    ],
    'strategize/complete': ['strategize/processing', 'execute/processing', 'execute/queued'],
    'strategize/errored': ['strategize/processing', 'execute/queued'],
    'strategize/constrained': ['strategize/processing'],
    'execute/queued': ['execute/processing', ...REWORK],
    'execute/processing': [
      'execute/processing',
      'execute/complete',
      'execute/errored',
      'execute/constrained',
      ...REWORK,
    ],
    'execute/complete': ['apply/queued', 'apply/processing', 'execute/errored', ...REWORK],
    'execute/errored': ['execute/processing', 'execute/complete', 'execute/errored', ...REWORK],
    'execute/constrained': ['execute/processing', ...REWORK],
    'apply/queued': ['apply/queued', 'apply/processing', 'execute/complete', ...REWORK],
    'apply/processing': ['apply/processing', 'apply/queued', 'apply/applied', 'apply/errored', 'execute/queued'],
    'apply/errored': ['apply/queued', 'apply/processing', 'execute/complete', 'execute/errored', ...REWORK],
    'apply/constrained': ['apply/queued', 'apply/processing', 'execute/complete', 'execute/errored', ...REWORK],
    'apply/applied': [],
  };
  for (const [from, tos] of Object.entries(ALLOWED))
    it(`from ${from}`, () => {
      const [fromPhase] = from.split('/');
      for (const phase of PHASES)
        for (const state of PHASE_STATES) {
          const to = `${phase}/${state}`;
          const cancel = state === 'cancelled' && phase === fromPhase && !from.endsWith('/applied');
          assert.equal(
            canMove(from as never, to as never),
            tos.includes(to) || cancel,
            `${from} → ${to} should be ${tos.includes(to) ? 'allowed' : 'refused'}`,
          );
        }
    });
});
