/**
 * PlanHousekeeping.rebase over fakes: how a failing sandbox rebase reaches the caller. A remote's
 * own error (its reason and hint) passes through; a git failure in the sandbox is a plan error
 * naming the sandbox. Either way the plan is left as it was.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PlanAccess } from '../../../../src/application/plans/plan-access.service.ts';
import { PlanHousekeeping } from '../../../../src/application/plans/plan-housekeeping.service.ts';
import { PlanQueries } from '../../../../src/application/plans/plan-queries.service.ts';
import type { PlanServiceDeps } from '../../../../src/application/plans/plan.types.ts';
import { makePrincipal, type SandboxInfo } from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import type { Plan } from '../../../../src/domain/plan/plan.ts';
import { aPlan } from '../../../support/builders.ts';

const ALICE = makePrincipal({ id: 'alice', roles: { team: 'member' } });
const REMOTE: SandboxInfo = {
  resource: 'team/app',
  kind: 'git-worktree',
  root: '/data/sandboxes/P/team.app',
  source: '/workspaces/team/.remotes/team.app.git',
  branch: 'cleveragents/plan-P',
  baseCommit: 'a'.repeat(40),
  targetBranch: 'main',
  remote: true,
};
const DEFINITIONS: Record<string, unknown> = {
  'project:team/p': { name: 'team/p', resources: ['team/app'] },
  'resource:team/app': { name: 'team/app', type: 'git-remote', url: 'https://git.example.com/app.git' },
};

/** A housekeeper over one stored plan whose sandbox rebase fails with `failure`. */
function housekeeping(plan: Plan, failure: Error) {
  const store = new Map([[plan.id, structuredClone(plan)]]);
  const saved: Plan[] = [];
  const given: unknown[] = [];
  const deps = {
    plans: {
      get: async (id: string) => structuredClone(store.get(id)),
      byIdPrefix: async () => [],
      save: async (p: Plan) => void saved.push(structuredClone(p)),
    },
    engine: { running: new Set<string>(), load: async (id: string) => structuredClone(store.get(id)) },
    recorder: {
      assertReachable: async () => {},
      checkpoint: async () => assert.fail('nothing to checkpoint'),
      save: async (p: Plan) => void saved.push(structuredClone(p)),
    },
    sandboxes: {
      rebase: async (_sb: SandboxInfo, definition: unknown) => {
        given.push(definition);
        throw failure;
      },
    },
    registry: {
      assertMayApplyInto: async () => {},
      use: async (kind: string, name: string) => {
        const definition = DEFINITIONS[`${kind}:${name}`];
        return definition ? { name, definition } : undefined;
      },
    },
    tasks: {},
  } as unknown as PlanServiceDeps;
  const access = new PlanAccess(deps);
  return { house: new PlanHousekeeping(deps, access, new PlanQueries(deps, access)), saved, given };
}

const applyRefused = (): Plan =>
  aPlan({
    id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    owner: 'team',
    projects: ['team/p'],
    phase: 'apply',
    state: 'errored',
    error: { kind: 'conflict', message: 'main moved', recoverable: true },
    sandboxes: [REMOTE],
  });

describe('PlanHousekeeping.rebase when a sandbox cannot be rebased', () => {
  it("passes a remote's own error through unchanged: its reason, message and hint, not the sandbox's path", async () => {
    const remoteError = new AppError('UNAVAILABLE', 'Resource team/app: the remote git.example.com cannot be reached', {
      details: { resource: 'team/app' },
      hint: 'check that the remote is up and the url in agents resource show team/app is right',
    });
    const { house, saved, given } = housekeeping(applyRefused(), remoteError);
    await assert.rejects(house.rebase('01ARZ3NDEKTSV4RRFFQ69G5FAV', {}, ALICE), (e: unknown) => {
      assert.equal(e, remoteError);
      assert.equal(e.reason, 'UNAVAILABLE');
      assert.doesNotMatch(`${e.message} ${e.hint ?? ''}`, /sandbox|internal/);
      return true;
    });
    assert.deepEqual(given, [DEFINITIONS['resource:team/app']], 'the rebase is given the definition as it is now');
    assert.deepEqual(saved, [], 'the plan is not changed');
  });

  it('wraps a git failure in the sandbox as a plan error naming the sandbox', async () => {
    const { house, saved } = housekeeping(applyRefused(), new Error('fatal: bad object HEAD'));
    await assert.rejects(house.rebase('01ARZ3NDEKTSV4RRFFQ69G5FAV', {}, ALICE), (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.reason, 'PLAN_ERROR');
      assert.equal(e.message, 'Plan 01ARZ3NDEKTSV4RRFFQ69G5FAV: rebasing team/app failed: fatal: bad object HEAD');
      assert.deepEqual(e.details, { planId: '01ARZ3NDEKTSV4RRFFQ69G5FAV', kind: 'internal', resource: 'team/app' });
      assert.equal(e.hint, 'see the sandbox at /data/sandboxes/P/team.app; nothing was changed in your repository');
      return true;
    });
    assert.deepEqual(saved, []);
  });
});
