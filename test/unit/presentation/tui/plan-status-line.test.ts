/** The TUI follows the open plan: the status line says where it is now, and the plan view what landed. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planLines } from '../../../../src/presentation/tui/lines.ts';
import { initialState, reduce, type PlanStatus, type TuiState } from '../../../../src/presentation/tui/state.ts';

const PLAN = '01JPLAN0000000000000000000';
const base = {
  planId: PLAN,
  phase: 'execute',
  state: 'processing',
  running: true,
  action: 'builtin/replace',
  projects: ['local/api'],
  progress: { stepsDone: 0, stepsTotal: 1 },
  attempt: 1,
  allowed: ['cancel'],
  checkpoints: [],
  tasks: {},
};
const status = (over: Record<string, unknown>): PlanStatus => ({ ...base, ...over }) as unknown as PlanStatus;

const opened = (): TuiState => {
  let s = reduce(initialState(), { type: 'open-plan', planId: PLAN });
  s = reduce(s, { type: 'plan-data', status: status({}) });
  return reduce(s, { type: 'notice', notice: { level: 'info', text: `executing plan ${PLAN} in its sandbox` } });
};

describe('the TUI status line follows the plan', () => {
  it('replaces what the operation said once the plan moves on', () => {
    let s = opened();
    // Only the log moved: what was said still holds.
    s = reduce(s, { type: 'plan-data', status: status({ progress: { stepsDone: 1, stepsTotal: 1 } }) });
    assert.deepEqual(s.notice, { level: 'info', text: `executing plan ${PLAN} in its sandbox` });
    s = reduce(s, { type: 'plan-data', status: status({ state: 'complete', running: false, allowed: ['apply'] }) });
    assert.deepEqual(s.notice, { level: 'info', text: `plan ${PLAN} execute/complete` });
    s = reduce(s, {
      type: 'plan-data',
      status: status({
        phase: 'apply',
        state: 'applied',
        running: false,
        applied: { at: 'now', commits: [{ resource: 'local/api', commit: '0123456789abcdef', files: ['a.ts'] }] },
      }),
    });
    assert.deepEqual(s.notice, { level: 'info', text: `plan ${PLAN} apply/applied: local/api commit 0123456789ab` });
  });

  it('says what the plan waits for, or where it stopped; an error notice stays', () => {
    let s = opened();
    s = reduce(s, {
      type: 'plan-data',
      status: status({ waiting: { kind: 'tool-approval', taskId: 'T1', request: {} } }),
    });
    assert.match((s.notice as { text: string }).text, /execute\/processing: waits for your answer/);
    s = reduce(s, {
      type: 'plan-data',
      status: status({ state: 'errored', running: false, error: { kind: 'tool', message: 'step 1 failed' } }),
    });
    assert.deepEqual(s.notice, { level: 'info', text: `plan ${PLAN} execute/errored: step 1 failed` });
    const err = { level: 'error' as const, report: { message: 'refused', type: 'PlanError' } };
    s = reduce(s, { type: 'notice', notice: err });
    s = reduce(s, { type: 'plan-data', status: status({ state: 'queued', running: false }) });
    assert.deepEqual(s.notice, err);
  });
});

describe('the TUI plan view', () => {
  it('shows the commit the apply landed, or that nothing was applied', () => {
    const pane = (over: Record<string, unknown>) => ({ ...opened().plan, status: status(over) });
    const text = (over: Record<string, unknown>) =>
      planLines(pane(over), 100)
        .map((l) => l.text)
        .join('\n');
    const landed = text({
      phase: 'apply',
      state: 'applied',
      applied: { at: 'now', commits: [{ resource: 'local/api', commit: '0123456789abcdef', files: ['a.ts', 'b.ts'] }] },
    });
    assert.match(landed, /^applied to local\/api: commit 0123456789ab \(2 files\)$/m);
    assert.match(
      text({ phase: 'apply', state: 'applied', applied: { at: 'now', commits: [] } }),
      /^applied: nothing \(no file changed, no commit\)$/m,
    );
    assert.doesNotMatch(text({}), /applied/);
  });
});
