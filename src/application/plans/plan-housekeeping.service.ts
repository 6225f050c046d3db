import { resourcesOf } from './plan-definitions.ts';
import { AppError } from '../../domain/errors.ts';
import type {
  KeptPlan,
  PlanDeletion,
  PlanPrune,
  PlanRebase,
  PrunedPlan,
  RemovedSandbox,
  SandboxRebase,
} from '../../domain/plan/housekeeping-views.ts';
import { type PhaseState, type Plan, type PlanError } from '../../domain/plan/plan.ts';
import { assertAllowed, isRebaseConflict, markRebaseConflict, markRebased } from '../../domain/plan/plan-state.ts';
import type { DiffStats } from '../../domain/plan/plan-views.ts';
import type { Principal } from '../ports/principal.ts';
import type { SandboxInfo } from '../ports/sandbox.port.ts';
import { waitingError, type PlanAccess } from './plan-access.service.ts';
import type { PlanQueries } from './plan-queries.service.ts';
import type { PlanServiceDeps } from './plan.types.ts';
import { dropSandboxes, replaceSandbox } from '../../domain/plan/plan-progress.ts';

export interface PruneInput {
  /** Only plans not updated for this long (default 7 days). */
  olderThanSeconds?: number | undefined;
  /** Only plans in these states (default applied and cancelled). */
  states?: PhaseState[] | undefined;
  /** Remove plans with unapplied changes too. */
  force?: boolean | undefined;
  /** Report what would be removed; change nothing. */
  dryRun?: boolean | undefined;
}

export const DEFAULT_PRUNE_AGE_SECONDS = 7 * 24 * 3600;
export const DEFAULT_PRUNE_STATES: readonly PhaseState[] = ['applied', 'cancelled'];

/** A sandbox whose rebase conflicted: the files with markers, and git's words. */
interface Conflict {
  sandbox: SandboxInfo;
  files: string[];
  message: string;
}

/** Whether a plan keeps work nobody applied: how much, and where; `unreadable` when its sandbox could not be read. */
type Unapplied = { stats: DiffStats; where: string[] } | { unreadable: string } | undefined;

/**
 * Housekeeping of plans: bringing a plan's sandboxes onto a moved target branch (rebase, and
 * `--continue` after resolving its conflicts by hand), and removing plans with their sandboxes and
 * branches (delete, prune, cancel --clean). Unapplied work is never removed without `force`.
 */
export class PlanHousekeeping {
  private readonly now: () => Date;

  private readonly deps: Pick<
    PlanServiceDeps,
    'plans' | 'engine' | 'recorder' | 'sandboxes' | 'tasks' | 'now' | 'registry'
  >;
  private readonly access: PlanAccess;
  private readonly queries: PlanQueries;

  constructor(
    deps: Pick<PlanServiceDeps, 'plans' | 'engine' | 'recorder' | 'sandboxes' | 'tasks' | 'now' | 'registry'>,
    access: PlanAccess,
    queries: PlanQueries,
  ) {
    this.deps = deps;
    this.access = access;
    this.queries = queries;
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Rebases every sandbox of the plan onto the current head of its target branch. Clean: a
   * checkpoint `after-rebase`, the plan stays (or, after a failed apply, is again) ready to apply.
   * Conflicted: the markers are checkpointed and the plan stops execute/errored, kind `conflict`,
   * with the files — thrown as a PlanError once saved.
   */
  async rebase(planId: string, opts: { continue?: boolean | undefined }, principal: Principal): Promise<PlanRebase> {
    const plan = await this.access.get(planId, principal);
    this.access.assertIdle(plan, 'rebase');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'rebase');
    await this.deps.registry.assertMayApplyInto(plan.projects, principal);
    await this.deps.recorder.assertReachable(plan);
    if (opts.continue) return this.continueRebase(plan, principal);
    if (isRebaseConflict(plan)) {
      throw new AppError('INVALID_STATE', `Plan ${plan.id} has a rebase conflict to resolve first`, {
        details: { planId: plan.id, phase: plan.phase, state: plan.state, files: plan.error?.files ?? [] },
        hint: plan.error?.hint,
      });
    }
    const copy = plan.sandboxes.find((s) => s.kind !== 'git-worktree');
    if (copy) {
      throw new AppError(
        'INVALID_STATE',
        `The sandbox of ${copy.resource} is a copy of a directory, not a git checkout: nothing to rebase`,
        {
          details: { planId: plan.id, resource: copy.resource },
          hint: `apply it (agents plan apply ${plan.id}): a copy is applied file by file`,
        },
      );
    }
    const { rows, conflicts } = await this.rebaseSandboxes(plan);
    const moved = conflicts.length > 0 || rows.some((r) => r.outcome === 'rebased');
    const checkpoint = moved ? await this.deps.recorder.checkpoint(plan, 'after-rebase', plan.cursor) : undefined;
    if (conflicts.length > 0) return this.stopOnConflicts(plan, conflicts, checkpoint?.id);
    if (moved) markRebased(plan);
    await this.deps.recorder.save(plan);
    return {
      planId: plan.id,
      outcome: moved ? 'rebased' : 'up-to-date',
      sandboxes: rows,
      ...(checkpoint ? { checkpointId: checkpoint.id } : {}),
      plan: await this.queries.status(plan.id, principal),
    };
  }

  /** Rebases each sandbox in turn (the plan keeps each one's new base); the clean ones and the conflicted ones. */
  private async rebaseSandboxes(plan: Plan): Promise<{ rows: SandboxRebase[]; conflicts: Conflict[] }> {
    const rows: SandboxRebase[] = [];
    const conflicts: Conflict[] = [];
    const definitions = plan.sandboxes.some((s) => s.remote) ? await resourcesOf(this.deps.registry, plan) : [];
    for (const [i, sb] of plan.sandboxes.entries()) {
      const definition = definitions.find((d) => d.name === sb.resource);
      const outcome = await this.deps.sandboxes.rebase(sb, definition).catch((err: unknown) => {
        // A remote's failure (refused credentials, unreachable, a missing branch) already says what
        // went wrong and what to do; the sandbox's path would only mislead.
        if (err instanceof AppError) throw err;
        throw new AppError('PLAN_ERROR', `Plan ${plan.id}: rebasing ${sb.resource} failed: ${messageOf(err)}`, {
          details: { planId: plan.id, kind: 'internal', resource: sb.resource },
          hint: `see the sandbox at ${sb.root}; nothing was changed in your repository`,
          cause: err,
        });
      });
      replaceSandbox(plan, i, outcome.sandbox);
      if (!outcome.ok) conflicts.push({ sandbox: outcome.sandbox, files: outcome.files, message: outcome.message });
      else
        rows.push({
          ...onto(outcome.sandbox),
          from: sb.baseCommit,
          onto: outcome.sandbox.baseCommit,
          outcome: outcome.moved ? 'rebased' : 'up-to-date',
          files: outcome.files,
        });
    }
    return { rows, conflicts };
  }

  /** The plan stops execute/errored with the conflicts (saved), thrown as a PLAN_ERROR naming the files. */
  private async stopOnConflicts(plan: Plan, conflicts: Conflict[], checkpointId: string | undefined): Promise<never> {
    const files = conflicts.flatMap((c) => c.files);
    const roots = conflicts.map((c) => c.sandbox.root);
    const error: PlanError = {
      kind: 'conflict',
      message: conflicts.map((c) => `${c.sandbox.resource}: ${c.message}`).join('; '),
      recoverable: true,
      files,
      hint:
        `resolve the conflict markers in ${roots.join(', ')} by hand, then run agents plan rebase ${plan.id} --continue; ` +
        `or let the execution actor resolve them: agents plan prompt ${plan.id} "resolve the rebase conflicts"`,
    };
    markRebaseConflict(plan, error);
    await this.deps.recorder.save(plan);
    throw new AppError('PLAN_ERROR', `Plan ${plan.id} was rebased with conflicts: ${error.message}`, {
      details: {
        planId: plan.id,
        kind: 'conflict',
        files,
        sandboxes: conflicts.map((c) => ({ resource: c.sandbox.resource, root: c.sandbox.root })),
        checkpointId,
      },
      hint: error.hint,
    });
  }

  /** After the conflicts were resolved by hand: none of the files may hold markers any more. */
  private async continueRebase(plan: Plan, principal: Principal): Promise<PlanRebase> {
    if (!isRebaseConflict(plan)) {
      throw new AppError('INVALID_STATE', `Plan ${plan.id} has no rebase conflict to continue from`, {
        details: { planId: plan.id, phase: plan.phase, state: plan.state },
        hint: `rebase it with agents plan rebase ${plan.id}`,
      });
    }
    const files = plan.error?.files ?? [];
    const left: string[] = [];
    for (const sb of plan.sandboxes) left.push(...(await this.deps.sandboxes.unresolved(sb, files)));
    if (left.length > 0) {
      throw new AppError('PLAN_ERROR', `Plan ${plan.id}: conflict markers remain in ${left.join(', ')}`, {
        details: { planId: plan.id, kind: 'conflict', files: left },
        hint: `edit them in ${plan.sandboxes.map((s) => s.root).join(', ')} (remove every <<<<<<< ======= >>>>>>> block), then run agents plan rebase ${plan.id} --continue again`,
      });
    }
    const checkpoint = await this.deps.recorder.checkpoint(plan, 'after-rebase', plan.cursor);
    markRebased(plan);
    await this.deps.recorder.save(plan);
    return {
      planId: plan.id,
      outcome: 'resolved',
      sandboxes: plan.sandboxes.map((sb) => ({
        ...onto(sb),
        from: sb.baseCommit,
        onto: sb.baseCommit,
        outcome: 'resolved' as const,
        files: [...files],
      })),
      checkpointId: checkpoint.id,
      plan: await this.queries.status(plan.id, principal),
    };
  }

  /**
   * Deletes a plan with its sandboxes and branches; refused while it runs, and — unless `force` —
   * when its sandboxes hold changes that were never applied.
   */
  async delete(planId: string, opts: { force?: boolean | undefined }, principal: Principal): Promise<PlanDeletion> {
    const plan = await this.access.get(planId, principal);
    this.access.assertIdle(plan, 'delete');
    await this.deps.recorder.assertReachable(plan, { orGone: true });
    const unapplied = await this.unapplied(plan);
    if (unapplied && !opts.force) throw this.unappliedError(plan, unapplied);
    const sandboxes = await this.remove(plan, principal);
    return {
      planId: plan.id,
      deleted: true,
      sandboxes,
      ...(unapplied && 'stats' in unapplied ? { discarded: unapplied.stats } : {}),
    };
  }

  /** Removes the caller's plans that match (state and age); what was removed, and what was kept and why. */
  async prune(input: PruneInput, principal: Principal): Promise<PlanPrune> {
    const olderThanSeconds = input.olderThanSeconds ?? DEFAULT_PRUNE_AGE_SECONDS;
    const states = input.states?.length ? [...new Set(input.states)] : [...DEFAULT_PRUNE_STATES];
    const cutoff = this.now().getTime() - olderThanSeconds * 1000;
    const matching = (await this.deps.plans.list({ owner: principal.namespace })).filter(
      (p) => states.includes(p.state) && Date.parse(p.updatedAt) <= cutoff,
    );
    const removed: PrunedPlan[] = [];
    const kept: KeptPlan[] = [];
    for (const listed of matching) {
      const plan = (await this.deps.engine.load(listed.id)) ?? listed;
      const row = { planId: plan.id, name: plan.name, phase: plan.phase, state: plan.state, updatedAt: plan.updatedAt };
      if (this.deps.engine.running.has(plan.id)) {
        kept.push({ ...row, reason: 'running' });
        continue;
      }
      const away = await this.deps.recorder.assertReachable(plan, { orGone: true }).then(
        () => undefined,
        (err: unknown) => messageOf(err),
      );
      if (away) {
        kept.push({ ...row, reason: `${away}; prune it on the instance that has its sandbox` });
        continue;
      }
      const unapplied = await this.unapplied(plan);
      if (unapplied && !input.force) {
        kept.push({ ...row, reason: `${describe(unapplied)}; prune --force removes it` });
        continue;
      }
      const discarded = unapplied && 'stats' in unapplied ? { discarded: unapplied.stats } : {};
      const sandboxes = input.dryRun ? plan.sandboxes.map(where) : await this.remove(plan, principal);
      removed.push({ ...row, sandboxes, ...discarded });
    }
    return { dryRun: input.dryRun ?? false, olderThanSeconds, states, removed, kept };
  }

  /** `cancel --clean`: the cancelled plan's sandboxes and branches go; the plan record stays. */
  async clean(plan: Plan): Promise<void> {
    await this.removeSandboxes(plan);
    dropSandboxes(plan);
    await this.deps.recorder.save(plan);
  }

  /** Closes the plan's open task, removes its sandboxes, then the plan itself (kept when a sandbox would not go). */
  private async remove(plan: Plan, principal: Principal): Promise<RemovedSandbox[]> {
    const current = plan.tasks[plan.phase];
    if (current && plan.state !== 'applied' && plan.state !== 'cancelled') {
      await this.deps.tasks.cancel(current, principal).catch(() => undefined);
    }
    const removed = await this.removeSandboxes(plan);
    await this.deps.plans.delete(plan.id);
    return removed;
  }

  private async removeSandboxes(plan: Plan): Promise<RemovedSandbox[]> {
    const removed: RemovedSandbox[] = [];
    for (const sb of plan.sandboxes) {
      await this.deps.sandboxes.remove(sb).catch((err: unknown) => {
        throw new AppError('PLAN_ERROR', `Plan ${plan.id}: removing the sandbox ${sb.root} failed: ${messageOf(err)}`, {
          details: { planId: plan.id, kind: 'internal', resource: sb.resource },
          hint: 'fix what git reports, then run the command again (the plan is kept until its sandboxes are gone)',
          cause: err,
        });
      });
      removed.push(where(sb));
    }
    return removed;
  }

  /** The changes a plan's sandboxes hold that were never applied (none after apply, or when the diff is empty). */
  private async unapplied(plan: Plan): Promise<Unapplied> {
    if (plan.state === 'applied' || plan.sandboxes.length === 0) return undefined;
    const stats: DiffStats = { files: 0, additions: 0, deletions: 0 };
    const where: string[] = [];
    for (const sb of plan.sandboxes) {
      try {
        const d = await this.deps.sandboxes.diff(sb);
        stats.files += d.stats.files;
        stats.additions += d.stats.additions;
        stats.deletions += d.stats.deletions;
        if (d.stats.files > 0)
          where.push(
            `${sb.resource} (${d.files
              .slice(0, 5)
              .map((f) => f.path)
              .join(', ')}${d.files.length > 5 ? ', …' : ''})`,
          );
      } catch (err) {
        return {
          unreadable: `its sandbox ${sb.root} could not be read (${messageOf(err)}) and may hold unapplied work`,
        };
      }
    }
    return stats.files > 0 ? { stats, where } : undefined;
  }

  private unappliedError(plan: Plan, u: NonNullable<Unapplied>): AppError {
    return new AppError('INVALID_STATE', `Plan ${plan.id} ${describe(u)}: deleting it would lose them`, {
      details: { planId: plan.id, phase: plan.phase, state: plan.state, ...('stats' in u ? { changes: u.stats } : {}) },
      hint: `look at them (agents plan diff ${plan.id}), apply them (agents plan apply ${plan.id}), or delete anyway with --force`,
    });
  }
}

function describe(u: NonNullable<Unapplied>): string {
  if ('unreadable' in u) return u.unreadable;
  const s = u.stats;
  return `has changes that were never applied: ${s.files} file${s.files === 1 ? '' : 's'} (+${s.additions} -${s.deletions}) in ${u.where.join(', ')}`;
}

const where = (sb: SandboxInfo): RemovedSandbox => ({
  resource: sb.resource,
  root: sb.root,
  ...(sb.branch ? { branch: sb.branch } : {}),
});

const onto = (sb: SandboxInfo): Pick<SandboxRebase, 'resource' | 'root' | 'targetBranch'> => ({
  resource: sb.resource,
  root: sb.root,
  ...(sb.targetBranch ? { targetBranch: sb.targetBranch } : {}),
});

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
