/**
 * PlanHousekeeping (PlanService.rebase / delete / prune / cancel --clean) over a real plan store
 * (SQLite in memory) and real sandboxes (git worktrees of a temporary repository): a moved base,
 * conflicts resolved by hand, and clean-up that never loses unapplied work without force.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PlanAccess } from '../../../../src/application/plans/plan-access.service.ts';
import { PlanEngine } from '../../../../src/application/plans/plan-engine.service.ts';
import { PlanRecorder } from '../../../../src/application/plans/plan.recorder.ts';
import { PlanHousekeeping } from '../../../../src/application/plans/plan-housekeeping.service.ts';
import { PlanQueries } from '../../../../src/application/plans/plan-queries.service.ts';
import type { PlanServiceDeps } from '../../../../src/application/plans/plan.types.ts';
import { makePrincipal, type Principal, type SandboxInfo } from '../../../../src/application/index.ts';
import { silentLogger } from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import type { Plan } from '../../../../src/domain/plan/plan.ts';
import type { ResourceDefinition } from '../../../../src/domain/registry/resource.definition.ts';
import {
  GitSandboxManager,
  openDatabase,
  SqlitePlanRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';
import { exists, git, makeRepo, read, rmrf, tmpDir, write } from '../../../unit/infrastructure/fixtures/repos.ts';

const ALICE: Principal = makePrincipal({ id: 'alice', roles: { alice: 'owner' } });
const BOB: Principal = makePrincipal({ id: 'bob', roles: { bob: 'owner' } });
const NOW = new Date('2026-12-20T00:00:00.000Z');
const DAY = 86_400_000;

/** What delete/prune refuse or report, as the caller sees it. */
async function refused(p: Promise<unknown>, reason: string, pattern: RegExp): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AppError, String(e));
    assert.equal(e.reason, reason, e.message);
    assert.match(`${e.message}\n${e.hint ?? ''}`, pattern);
    return e;
  }
  assert.fail('expected a refusal');
}

describe('PlanHousekeeping on real sandboxes', () => {
  let repo: string;
  let data: string;
  let db: SqliteDatabase;
  let plans: SqlitePlanRepository;
  let sandboxes: GitSandboxManager;
  let engine: PlanEngine;
  let house: PlanHousekeeping;
  let cancelled: string[];
  let resource: Extract<ResourceDefinition, { type: 'git-checkout' }>;
  let n = 0;

  beforeEach(async () => {
    repo = makeRepo();
    data = tmpDir('data');
    db = await openDatabase({ file: ':memory:' });
    plans = new SqlitePlanRepository(db);
    sandboxes = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
    resource = { name: 'local/app', type: 'git-checkout', path: repo };
    const recorder = new PlanRecorder({ plans, sandboxes, logger: silentLogger, now: () => NOW });
    engine = new PlanEngine({
      recorder,
      plans,
      registry: { lookup: async () => undefined, use: async () => undefined },
      sandboxes,
      tools: { run: async () => ({ ok: true, summary: '', output: '', filesTouched: [] }) },
      logger: silentLogger,
    });
    cancelled = [];
    const deps = {
      plans,
      engine,
      recorder,
      sandboxes,
      now: () => NOW,
      // Local mode: the local user writes every resource; status shows host paths.
      registry: { assertMayApplyInto: async () => {}, showsHostPaths: () => true },
      tasks: {
        cancel: async (id: string) => void cancelled.push(id),
        get: async () => undefined,
      },
    } as unknown as PlanServiceDeps;
    const access = new PlanAccess(deps);
    house = new PlanHousekeeping(deps, access, new PlanQueries(deps, access));
  });
  afterEach(async () => {
    await db.close();
    rmrf(repo, data);
  });

  /** A plan of `owner` in phase/state with a real sandbox holding `changes` (path → content), committed. */
  async function planWith(
    phase: Plan['phase'],
    state: Plan['state'],
    changes: Record<string, string>,
    extra: Partial<Plan> = {},
  ): Promise<Plan> {
    const id = `01ARZ3NDEKTSV4RRFFQ69G5F${String(n++).padStart(2, '0')}`;
    const sb = await sandboxes.create(id, resource);
    for (const [rel, content] of Object.entries(changes)) write(sb.root, rel, content);
    if (Object.keys(changes).length) await sandboxes.checkpoint(sb, 'work');
    const at = new Date(NOW.getTime() - DAY).toISOString();
    const plan: Plan = {
      id,
      name: `plan ${id}`,
      action: 'builtin/replace',
      projects: ['local/p'],
      arguments: {},
      description: 'd',
      definitionOfDone: 'done',
      automationProfile: 'trusted',
      phase,
      state,
      attempt: 1,
      contextId: `plan-${id}`,
      tasks: { execute: `task-${id}` },
      owner: 'alice',
      createdAt: at,
      updatedAt: at,
      budget: { maxToolCalls: 10, maxWallMs: 60_000 },
      usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
      cursor: 1,
      stepsTotal: 1,
      sandboxes: [sb],
      ...extra,
    };
    await plans.create(plan);
    return plan;
  }

  const userCommit = (rel: string, content: string): string => {
    write(repo, rel, content);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', `user: ${rel}`);
    return git(repo, 'rev-parse', 'HEAD');
  };
  const planBranches = (): string => git(repo, 'branch', '--list', 'cleveragents/*');
  const stored = async (id: string): Promise<Plan> => {
    const p = await plans.get(id);
    assert.ok(p);
    return p;
  };

  describe('rebase', () => {
    it('after a failed apply: a clean rebase onto the moved branch makes the plan appliable, with a checkpoint', async () => {
      const p = await planWith(
        'apply',
        'errored',
        { 'a.txt': 'one\nTWO\nthree\n' },
        {
          error: { kind: 'conflict', message: 'conflict', recoverable: true, files: ['a.txt'] },
        },
      );
      const head = userCommit('c.txt', 'moved\n');

      const r = await house.rebase(p.id, {}, ALICE);

      assert.equal(r.outcome, 'rebased');
      assert.deepEqual(
        r.sandboxes.map((s) => [s.resource, s.outcome, s.onto, s.files]),
        [['local/app', 'rebased', head, ['a.txt']]],
      );
      assert.equal(`${r.plan.phase}/${r.plan.state}`, 'execute/complete');
      assert.equal(r.plan.error, undefined);
      assert.ok(r.plan.allowed.includes('apply'));
      assert.deepEqual(
        r.plan.checkpoints.map((c) => c.label),
        ['after-rebase'],
      );
      assert.equal(r.plan.checkpoints[0]?.id, r.checkpointId);
      const saved = await stored(p.id);
      assert.equal(saved.sandboxes[0]?.baseCommit, head, 'the new base is saved: diff and apply are against it');
      const diff = await sandboxes.diff(saved.sandboxes[0]);
      assert.deepEqual(
        diff.files.map((f) => f.path),
        ['a.txt'],
      );
      // Again: nothing moved, nothing changes.
      const again = await house.rebase(p.id, {}, ALICE);
      assert.equal(again.outcome, 'up-to-date');
      assert.equal(again.checkpointId, undefined);
      assert.equal(again.plan.checkpoints.length, 1);
    });

    it('a conflict: execute/errored with the files, markers in the sandbox, a hint naming --continue and prompt; --continue refused until resolved', async () => {
      const p = await planWith('execute', 'complete', { 'a.txt': 'one\nplan\nthree\n' });
      userCommit('a.txt', 'one\nuser\nthree\n');
      const root = p.sandboxes[0]?.root ?? '';

      const err = await refused(house.rebase(p.id, {}, ALICE), 'PLAN_ERROR', /conflict/);
      assert.deepEqual(err.details['files'], ['a.txt']);
      assert.equal(err.details['kind'], 'conflict');
      assert.ok(err.hint?.includes(root), err.hint);
      assert.ok(err.hint?.includes(`agents plan rebase ${p.id} --continue`), err.hint);
      assert.ok(err.hint?.includes(`agents plan prompt ${p.id}`), err.hint);
      const saved = await stored(p.id);
      assert.equal(`${saved.phase}/${saved.state}`, 'execute/errored');
      assert.equal(saved.error?.kind, 'conflict');
      assert.equal(saved.error?.recoverable, true);
      assert.deepEqual(saved.error?.files, ['a.txt']);
      assert.match(read(root, 'a.txt'), /^<<<<<<< main$/m);
      assert.deepEqual(
        (await plans.checkpoints(p.id)).map((c) => c.label),
        ['after-rebase'],
        'the markers are checkpointed',
      );

      // A plain rebase again is refused; --continue is refused while markers remain.
      await refused(house.rebase(p.id, {}, ALICE), 'INVALID_STATE', /rebase conflict to resolve first/);
      const left = await refused(
        house.rebase(p.id, { continue: true }, ALICE),
        'PLAN_ERROR',
        /markers remain in a\.txt/,
      );
      assert.deepEqual(left.details['files'], ['a.txt']);
      assert.equal(`${(await stored(p.id)).phase}/${(await stored(p.id)).state}`, 'execute/errored');

      write(root, 'a.txt', 'one\nuser, then plan\nthree\n');
      const done = await house.rebase(p.id, { continue: true }, ALICE);
      assert.equal(done.outcome, 'resolved');
      assert.equal(`${done.plan.phase}/${done.plan.state}`, 'execute/complete');
      assert.equal(done.plan.error, undefined);
      assert.equal(git(root, 'status', '--porcelain'), '', 'the resolution is checkpointed');
      // The resolved plan applies onto the moved branch.
      const applied = await sandboxes.apply((await stored(p.id)).sandboxes[0] as SandboxInfo, 'apply');
      assert.equal(applied.ok, true);
      assert.equal(read(repo, 'a.txt'), 'one\nuser, then plan\nthree\n');
    });

    it('refuses a plan that is not done executing, one without a conflict to continue, a copy sandbox, and someone else’s plan', async () => {
      const queued = await planWith('execute', 'queued', {});
      await refused(house.rebase(queued.id, {}, ALICE), 'INVALID_STATE', /rebase needs a sandbox/);
      const done = await planWith('execute', 'complete', {});
      await refused(house.rebase(done.id, { continue: true }, ALICE), 'INVALID_STATE', /no rebase conflict/);
      await refused(house.rebase(done.id, {}, BOB), 'NOT_FOUND', /was not found/);
      const copy: SandboxInfo = { ...(done.sandboxes[0] as SandboxInfo), kind: 'copy' };
      await plans.save({ ...done, sandboxes: [copy] });
      await refused(house.rebase(done.id, {}, ALICE), 'INVALID_STATE', /not a git checkout: nothing to rebase/);
    });
  });

  describe('delete', () => {
    it('refuses a plan with changes never applied, saying what would be lost and --force; with force removes worktree, branch and records', async () => {
      const p = await planWith('execute', 'complete', { 'a.txt': 'changed\n', 'new.txt': 'x\n' });
      const root = p.sandboxes[0]?.root ?? '';
      const err = await refused(house.delete(p.id, {}, ALICE), 'INVALID_STATE', /never applied: 2 files/);
      assert.match(err.message, /local\/app \(a\.txt, new\.txt\)/);
      assert.match(err.hint ?? '', /--force/);
      assert.ok(await plans.get(p.id), 'the plan is kept');
      assert.ok(exists(root));

      const r = await house.delete(p.id, { force: true }, ALICE);
      assert.deepEqual(r.sandboxes, [{ resource: 'local/app', root, branch: `cleveragents/plan-${p.id}` }]);
      assert.deepEqual(r.discarded, { files: 2, additions: 2, deletions: 3 });
      assert.equal(await plans.get(p.id), undefined);
      assert.deepEqual(await plans.checkpoints(p.id), []);
      assert.equal(exists(root), false);
      assert.equal(planBranches(), '');
      assert.doesNotMatch(git(repo, 'worktree', 'list', '--porcelain'), new RegExp(p.id));
      assert.deepEqual(cancelled, [`task-${p.id}`], "the plan's open task is cancelled");
    });

    it('deletes a plan whose sandbox holds no changes without force, and refuses a running one and a stranger', async () => {
      const p = await planWith('execute', 'complete', {});
      await refused(house.delete(p.id, {}, BOB), 'NOT_FOUND', /was not found/);
      // While a run holds the plan, even force does not delete it.
      const running = engine.running as Set<string>;
      running.add(p.id);
      await refused(house.delete(p.id, { force: true }, ALICE), 'INVALID_STATE', /is running .*delete must wait/);
      running.delete(p.id);
      assert.ok(await plans.get(p.id));
      const r = await house.delete(p.id, {}, ALICE);
      assert.equal(r.deleted, true);
      assert.equal(r.discarded, undefined);
      assert.equal(planBranches(), '');
      await refused(house.delete(p.id, {}, ALICE), 'NOT_FOUND', /was not found/);
    });
  });

  describe('prune and clean', () => {
    it('removes by default applied and cancelled plans older than 7 days, keeps unapplied work without force, and only the caller’s', async () => {
      const old = new Date(NOW.getTime() - 8 * DAY).toISOString();
      const applied = await planWith('apply', 'applied', {}, { updatedAt: old });
      const cancelledClean = await planWith('execute', 'cancelled', {}, { updatedAt: old });
      const cancelledWork = await planWith('execute', 'cancelled', { 'a.txt': 'work\n' }, { updatedAt: old });
      const recent = await planWith('execute', 'cancelled', {});
      const errored = await planWith('execute', 'errored', {}, { updatedAt: old });
      const bobs = await planWith('apply', 'applied', {}, { updatedAt: old, owner: 'bob' });

      const dry = await house.prune({ dryRun: true }, ALICE);
      assert.equal(dry.dryRun, true);
      assert.deepEqual(dry.states, ['applied', 'cancelled']);
      assert.equal(dry.olderThanSeconds, 7 * 86_400);
      assert.deepEqual(dry.removed.map((p) => p.planId).sort(), [applied.id, cancelledClean.id].sort());
      assert.ok(await plans.get(applied.id), 'a dry run removes nothing');
      assert.match(planBranches(), new RegExp(applied.id));

      const r = await house.prune({}, ALICE);
      assert.deepEqual(r.removed.map((p) => p.planId).sort(), [applied.id, cancelledClean.id].sort());
      assert.deepEqual(
        r.kept.map((p) => [p.planId, p.reason]),
        [
          [
            cancelledWork.id,
            `has changes that were never applied: 1 file (+1 -3) in local/app (a.txt); prune --force removes it`,
          ],
        ],
      );
      for (const gone of [applied, cancelledClean]) {
        assert.equal(await plans.get(gone.id), undefined);
        assert.doesNotMatch(planBranches(), new RegExp(gone.id));
      }
      for (const stays of [cancelledWork, recent, errored, bobs]) assert.ok(await plans.get(stays.id), stays.id);

      const forced = await house.prune({ force: true, olderThanSeconds: 0, states: ['cancelled'] }, ALICE);
      assert.deepEqual(forced.removed.map((p) => p.planId).sort(), [cancelledWork.id, recent.id].sort());
      assert.deepEqual(forced.removed.find((p) => p.planId === cancelledWork.id)?.discarded, {
        files: 1,
        additions: 1,
        deletions: 3,
      });
      assert.ok(await plans.get(errored.id));
      assert.ok(await plans.get(bobs.id), "another owner's plan is never pruned");
      assert.match(planBranches(), new RegExp(errored.id));
    });

    it('clean (cancel --clean) removes the sandboxes and branches and keeps the plan record', async () => {
      const p = await planWith('execute', 'cancelled', { 'a.txt': 'work\n' });
      await house.clean((await engine.load(p.id)) as Plan);
      const saved = await stored(p.id);
      assert.deepEqual(saved.sandboxes, []);
      assert.equal(saved.state, 'cancelled');
      assert.equal(planBranches(), '');
      assert.equal(exists(p.sandboxes[0]?.root ?? ''), false);
    });
  });
});
