/**
 * Plan recovery (plan-recovery.ts, through PlanService.settleInterrupted) over fakes: only plans
 * no live process runs become resumable.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PlanService } from '../../../../src/application/plans/plan.service.ts';
import type { Phase, PhaseState, Plan } from '../../../../src/domain/plan/plan.ts';
import { aPlan } from '../../../support/builders.ts';

function plan(id: string, phase: Phase, state: PhaseState, extra: Partial<Plan> = {}): Plan {
  const at = '2026-01-01T00:00:00.000Z';
  return aPlan({
    ...{ id, name: id, action: 'local/act', automationProfile: 'auto', phase, state, tasks: { [phase]: `task-${id}` } },
    ...{ createdAt: at, updatedAt: at, cursor: 1, stepsTotal: 2 },
    ...extra,
  });
}

function service(plans: Plan[], running: Set<string> = new Set()) {
  const store = new Map(plans.map((p) => [p.id, structuredClone(p)]));
  const repo = {
    listByState: async (s: PhaseState) =>
      [...store.values()].filter((p) => p.state === s).map((p) => structuredClone(p)),
    get: async (id: string) => structuredClone(store.get(id)),
    save: async (p: Plan) => void store.set(p.id, structuredClone(p)),
  };
  const engine = { running };
  const svc = new PlanService(
    {
      plans: repo,
      engine,
      registry: {},
      tasks: {},
      sessions: {},
      now: () => new Date('2026-02-02T00:00:00.000Z'),
    } as never,
    {} as never,
  );
  return { svc, store };
}

describe('PlanService.settleInterrupted', () => {
  it('makes a plan whose phase task no live process runs errored/interrupted, with the resume hint', async () => {
    const { svc, store } = service([plan('a', 'execute', 'processing'), plan('b', 'apply', 'processing')]);
    assert.deepEqual((await svc.settleInterrupted(async () => true)).sort(), ['a', 'b']);
    const a = store.get('a');
    assert.equal(`${a?.phase}/${a?.state}`, 'execute/errored');
    assert.deepEqual(a?.error, {
      kind: 'interrupted',
      message:
        'the execute phase was interrupted: the agent process running it stopped (a server restart, or Ctrl-C on a local command)',
      recoverable: true,
      hint: 'agents plan execute a resumes from the last checkpoint',
    });
    assert.equal(store.get('b')?.error?.hint, 'agents plan apply b tries the apply again');
    assert.equal(a?.updatedAt, '2026-02-02T00:00:00.000Z');
  });

  it('leaves alone a plan run by another live process, one run here, one waiting for an answer, and one not processing', async () => {
    const { svc, store } = service(
      [
        plan('live', 'execute', 'processing'),
        plan('here', 'execute', 'processing'),
        plan('waits', 'execute', 'processing', {
          waiting: { kind: 'tool-approval', taskId: 't', request: { kind: 'tool-call' } },
        }),
        plan('done', 'execute', 'complete'),
      ],
      new Set(['here']),
    );
    const asked: string[] = [];
    const settled = await svc.settleInterrupted(async (taskId) => {
      asked.push(taskId);
      return taskId !== 'task-live';
    });
    assert.deepEqual(settled, []);
    assert.deepEqual(asked, ['task-live'], 'only the candidate is checked');
    assert.equal(store.get('live')?.state, 'processing');
    assert.equal(store.get('waits')?.state, 'processing');
  });

  it('leaves a plan whose phase task is not stored yet while it is recent (another process may be starting it), and settles an old one', async () => {
    const { svc, store } = service([
      plan('starting', 'strategize', 'processing', { updatedAt: '2026-02-01T23:59:50.000Z' }),
      plan('old', 'strategize', 'processing', { updatedAt: '2026-02-01T23:00:00.000Z' }),
    ]);
    assert.deepEqual(await svc.settleInterrupted(async () => 'missing'), ['old']);
    assert.equal(store.get('starting')?.state, 'processing');
    assert.equal(`${store.get('old')?.phase}/${store.get('old')?.state}`, 'strategize/errored');
  });
});
