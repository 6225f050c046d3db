import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { Message, Task } from '../../domain/a2a.model.ts';
import { parseApprovalAnswer } from '../../domain/plan/approval.ts';
import {
  assertAllowed,
  cancelPlan,
  planNetwork,
  renderTemplate,
  requeueExecute,
  type Plan,
  type PlanActors,
  type PlanInvariant,
} from '../../domain/plan/plan.ts';
import type { PlanDeletion, PlanPrune, PlanRebase } from '../../domain/plan/housekeeping-views.ts';
import type {
  Correction,
  DecisionExplanation,
  PlanArtifacts,
  PlanDiff,
  PlanTree,
} from '../../domain/plan/plan-views.ts';
import type { PolicySnapshot } from '../../domain/plan/policy.ts';
import { DEFAULT_AUTOMATION_PROFILE, GLOBAL_INVARIANTS } from '../../domain/registry/builtins.ts';
import { profileEntityName, type ProjectDefinition } from '../../domain/registry/project.definition.ts';
import { type ActionDefinition } from '../../domain/registry/action.definition.ts';
import type { Principal } from '../ports/principal.ts';
import type { ContextOwner, OwnedRun } from '../tasks/task.service.ts';
import { resolveArguments } from './arguments.ts';
import { CONTEXT_PREFIX, PlanAccess, waitingError } from './plan-access.ts';
import { PlanAnswers } from './plan-answers.ts';
import { assertCostBudgetCounts } from './cost-budget-check.ts';
import { PlanCorrections } from './plan-correction.ts';
import { PlanHousekeeping, type PruneInput } from './plan-housekeeping.ts';
import { PlanQueries } from './plan-queries.ts';
import { settleInterruptedPlans, MISSING_TASK_GRACE_MS } from './plan-recovery.ts';
import type { PlanStatus } from './plan-views.ts';
import type { CorrectInput, PlanListInput, PlanServiceDeps, RunResult } from './plan.types.ts';
import { moveCursor, setBudget } from '../../domain/plan/plan-progress.ts';

export type { CorrectInput, PlanListInput, PlanServiceDeps, RunResult } from './plan.types.ts';

/** The action of `plan use --goal`. */
export const GOAL_ACTION = 'builtin/goal';

/** The global invariants, then the action's, then each project's, in that order. */
function invariantsOf(
  action: string,
  def: ActionDefinition,
  names: string[],
  projects: ProjectDefinition[],
): PlanInvariant[] {
  return [
    ...GLOBAL_INVARIANTS.map((text) => ({ text, source: 'global' as const })),
    ...(def.invariants ?? []).map((text) => ({ text, source: 'action' as const, from: action })),
    ...projects.flatMap((p, i) =>
      (p.settings?.invariants ?? []).map((text) => ({ text, source: 'project' as const, from: names[i] ?? p.name })),
    ),
  ];
}

/** The verify command: the first project's that has one, else the action's. */
function verifyOf(
  action: string,
  def: ActionDefinition,
  names: string[],
  projects: ProjectDefinition[],
): Plan['verify'] {
  const i = projects.findIndex((p) => p.settings?.verify);
  const project = projects[i];
  const [v, source] = project?.settings?.verify
    ? [project.settings.verify, `project ${names[i] ?? project.name}`]
    : [def.verify, `action ${action}`];
  if (!v) return undefined;
  return { command: v.command, ...(v.timeoutSeconds ? { timeoutSeconds: v.timeoutSeconds } : {}), source };
}

export interface UseInput {
  /** Absent with a goal: builtin/goal. */
  action?: string | undefined;
  /** The `goal` argument of builtin/goal (or of any action that declares one). */
  goal?: string | undefined;
  projects: string[];
  arguments?: Record<string, unknown> | undefined;
  /** An automation profile entity (`manual`, `trusted`, `auto`: the built-ins). */
  automationProfile?: string | undefined;
  maxToolCalls?: number | undefined;
  maxWallSeconds?: number | undefined;
  maxTokens?: number | undefined;
  maxCost?: number | undefined;
  /** Both actors of a plan from a goal (an action without steps). */
  actor?: string | undefined;
  strategyActor?: string | undefined;
  executionActor?: string | undefined;
  wait?: boolean | undefined;
}

/**
 * The plan lifecycle behind the `_cleveragents/plan/…` methods: the commands that create a plan
 * and move it through its phases (use, execute, apply, prompt, rollback, cancel). Each phase runs
 * on an A2A task of the plan's context that this service owns (TaskService.startOwnedTask): no
 * actor, no chat. The read side (PlanQueries), answers to approvals (PlanAnswers), corrections
 * (PlanCorrections) and recovery after a restart (plan-recovery) live next to it; this class is
 * the one facade over all of them.
 */
export class PlanService implements ContextOwner {
  private readonly now: () => Date;
  private readonly access: PlanAccess;
  private readonly queries: PlanQueries;
  private readonly answers: PlanAnswers;
  private readonly corrections: PlanCorrections;
  private readonly housekeeping: PlanHousekeeping;

  private readonly deps: PlanServiceDeps;

  constructor(deps: PlanServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
    this.access = new PlanAccess(deps);
    this.queries = new PlanQueries(deps, this.access);
    this.answers = new PlanAnswers(deps, this.access, this.queries);
    this.corrections = new PlanCorrections(deps, this.access, this.answers, (plan, replan, principal) =>
      this.runOn(plan, 'strategize', principal, true, (task) => this.deps.engine.replan(plan.id, task, replan)),
    );
    this.housekeeping = new PlanHousekeeping(deps, this.access, this.queries);
  }

  async use(input: UseInput, principal: Principal): Promise<RunResult> {
    const actionName = input.action ?? (input.goal !== undefined ? GOAL_ACTION : undefined);
    if (!actionName)
      throw new AppError('INVALID_PARAMS', 'A plan needs an action, or a goal', {
        fields: [{ field: 'action', description: 'name an action, or give a goal (builtin/goal)' }],
      });
    const action = await this.deps.registry.show('action', actionName, principal);
    const def = action.definition;
    if (input.projects.length === 0)
      throw new AppError('INVALID_PARAMS', 'A plan needs at least one project', {
        fields: [{ field: 'projects', description: 'name at least one project' }],
      });
    let profile: string | undefined = input.automationProfile;
    const networks: Array<'none' | 'allow' | undefined> = [];
    const projects: ProjectDefinition[] = [];
    for (const name of input.projects) {
      const p = await this.deps.registry.show('project', name, principal);
      const project = p.definition;
      projects.push(project);
      profile ??= project.settings?.automationProfile;
      networks.push(project.settings?.network);
      for (const r of p.derived.resources) {
        if (!r.exists)
          throw new AppError(
            'INVALID_STATE',
            `Resource ${r.name} of project ${name} ${'missing' in r ? 'is not registered' : 'has no directory on disk'}`,
            { hint: `see agents project show ${name}` },
          );
      }
    }
    await this.deps.registry.assertMayApplyInto(input.projects, principal);
    const stepped = (def.steps?.length ?? 0) > 0;
    const actors = stepped ? undefined : await this.chooseActors(action.name, def, projects, input, principal);
    await assertCostBudgetCounts(this.deps.registry, actors, input.maxCost);
    if (stepped && (input.actor ?? input.strategyActor ?? input.executionActor))
      throw new AppError(
        'INVALID_PARAMS',
        `Action ${action.name} declares steps: they run as declared, without actors`,
        {
          fields: [{ field: 'actor', description: 'only for actions without steps (builtin/goal)' }],
          hint: 'leave --actor out, or plan a goal: agents plan use --goal "…" PROJECT --actor NAME',
        },
      );
    const given = { ...(input.arguments ?? {}) };
    if (input.goal !== undefined) {
      if (!def.arguments?.['goal'])
        throw new AppError('INVALID_PARAMS', `Action ${action.name} takes no goal argument`, {
          fields: [{ field: 'goal', description: `use builtin/goal, or pass the action's own arguments` }],
        });
      given['goal'] = input.goal;
    }
    const args = resolveArguments(def, given);
    const at = this.now().toISOString();
    const policy = await this.snapshotProfile(profile ?? DEFAULT_AUTOMATION_PROFILE, at, principal);
    const id = newId();
    const verify = verifyOf(action.name, def, input.projects, projects);
    const plan: Plan = {
      id,
      name: `${action.name.split('/')[1] ?? action.name} on ${input.projects.join(', ')}`,
      action: action.name,
      projects: input.projects,
      arguments: args,
      description: String(renderTemplate(def.descriptionTemplate, args)),
      definitionOfDone: String(renderTemplate(def.definitionOfDone, args)),
      automationProfile: policy.profile,
      policy,
      phase: 'strategize',
      state: 'queued',
      attempt: 1,
      contextId: `${CONTEXT_PREFIX}${id}`,
      tasks: {},
      owner: principal.namespace,
      createdAt: at,
      updatedAt: at,
      budget: {
        maxToolCalls: input.maxToolCalls ?? 100,
        maxWallMs: (input.maxWallSeconds ?? 1800) * 1000,
        ...(input.maxTokens ? { maxTokens: input.maxTokens } : {}),
        ...(input.maxCost ? { maxCost: input.maxCost } : {}),
      },
      usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
      cursor: 0,
      stepsTotal: def.steps?.length ?? 0,
      sandboxes: [],
      network: planNetwork(networks, def.network),
      ...(actors ? { actors } : {}),
      invariants: invariantsOf(action.name, def, input.projects, projects),
      ...(verify ? { verify } : {}),
    };
    await this.deps.plans.create(plan);
    return this.runOn(plan, 'strategize', principal, input.wait ?? true, (task) =>
      this.deps.engine.strategizeOn(plan.id, task),
    );
  }

  /**
   * The actors of a plan without declared steps, each chosen in this order: the flag (`actor` for
   * both), the action's, the project's. Each must be an LLM actor the caller may read.
   */
  private async chooseActors(
    action: string,
    def: ActionDefinition,
    projects: ProjectDefinition[],
    input: UseInput,
    principal: Principal,
  ): Promise<PlanActors> {
    if (!this.deps.engine.runsActors)
      throw new AppError('INVALID_STATE', `Action ${action} declares no steps, and this agent runs no LLM actors`, {
        hint: 'plan an action with declared steps (builtin/replace, builtin/run-command), or run an agent with LLM providers',
      });
    const pick = (role: 'strategy' | 'execution'): { name: string; source: string } | undefined => {
      const flag = role === 'strategy' ? input.strategyActor : input.executionActor;
      if (flag) return { name: flag, source: `--${role}-actor` };
      if (input.actor) return { name: input.actor, source: '--actor' };
      const fromAction = role === 'strategy' ? def.strategyActor : def.executionActor;
      if (fromAction) return { name: fromAction, source: `action ${action}` };
      for (const p of projects) {
        const fromProject = role === 'strategy' ? p.settings?.strategyActor : p.settings?.executionActor;
        if (fromProject) return { name: fromProject, source: `project ${p.name}` };
      }
      return undefined;
    };
    const strategy = pick('strategy');
    const execution = pick('execution');
    if (!strategy || !execution) {
      const missing = [!strategy ? 'a strategy actor' : '', !execution ? 'an execution actor' : '']
        .filter(Boolean)
        .join(' and ');
      const what = action === GOAL_ACTION ? 'A plan from a goal' : `Action ${action} declares no steps: the plan`;
      throw new AppError('INVALID_PARAMS', `${what} needs ${missing}`, {
        fields: [{ field: 'actor', description: 'name an LLM actor' }],
        hint: "choose one with --actor NAME (both), --strategy-actor / --execution-actor, or set strategyActor and executionActor on the action or in the project's settings",
      });
    }
    for (const [role, c] of [
      ['strategy', strategy],
      ['execution', execution],
    ] as const) {
      const e = await this.deps.registry.visible('actor', c.name, principal);
      if (e.definition.provider === 'builtin')
        throw new AppError(
          'INVALID_PARAMS',
          `Actor ${c.name} (the ${role} actor, from ${c.source}) is a built-in deterministic actor: it cannot plan or carry out a goal`,
          {
            fields: [{ field: `${role}Actor`, description: 'an LLM actor (openai-compatible, openai, anthropic)' }],
            hint: 'see the LLM actors with agents actor list --type openai-compatible',
          },
        );
    }
    return {
      strategy: strategy.name,
      execution: execution.name,
      source: { strategy: strategy.source, execution: execution.source },
    };
  }

  /** The profile's rules as they are now: the plan keeps this copy whatever happens to the profile later. */
  private async snapshotProfile(ref: string, at: string, principal: Principal): Promise<PolicySnapshot> {
    const e = await this.deps.registry.show('automation-profile', profileEntityName(ref), principal);
    const d = e.definition;
    return {
      profile: e.name,
      revision: e.revision,
      contentHash: e.contentHash,
      default: d.default,
      applyApproval: d.applyApproval ?? true,
      rules: d.rules ?? [],
      takenAt: at,
    };
  }

  async execute(
    planId: string,
    opts: {
      wait?: boolean | undefined;
      yes?: boolean | undefined;
      maxToolCalls?: number | undefined;
      maxWallSeconds?: number | undefined;
      maxTokens?: number | undefined;
      maxCost?: number | undefined;
    },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.access.get(planId, principal);
    this.access.assertIdle(plan, 'execute');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'execute');
    await this.deps.registry.assertMayApplyInto(plan.projects, principal);
    // Before anything changes: a refused budget leaves the plan as it was.
    await assertCostBudgetCounts(this.deps.registry, plan.actors, opts.maxCost);
    if (plan.state === 'processing' && plan.phase === 'execute' && plan.tasks.execute) {
      // Nothing runs it any more: the agent stopped mid-run. Close that task and resume.
      await this.deps.tasks
        .fail(
          plan.tasks.execute,
          'Interrupted: the agent stopped while this ran; resumed from the last checkpoint in a new task',
          principal,
        )
        .catch(() => {});
    }
    setBudget(plan, {
      maxToolCalls: opts.maxToolCalls,
      maxWallMs: opts.maxWallSeconds ? opts.maxWallSeconds * 1000 : undefined,
      maxTokens: opts.maxTokens,
      maxCost: opts.maxCost,
    });
    await this.deps.engine.save(plan);
    return this.runOn(plan, 'execute', principal, opts.wait ?? false, (task) =>
      this.deps.engine.execute(planId, task, { yes: opts.yes ?? false }),
    );
  }

  async apply(
    planId: string,
    opts: { yes?: boolean | undefined; wait?: boolean | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.access.get(planId, principal);
    this.access.assertIdle(plan, 'apply');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'apply');
    await this.deps.registry.assertMayApplyInto(plan.projects, principal);
    const wait = opts.wait ?? true;
    const result = await this.runOn(plan, 'apply', principal, wait, (task) =>
      this.deps.engine.apply(planId, task, { yes: opts.yes ?? false }),
    );
    const after = result.plan;
    // Only a finished run of this apply speaks for its outcome (an earlier attempt's error may linger).
    if (
      wait &&
      result.task?.status.state === 'TASK_STATE_FAILED' &&
      after.error &&
      (after.error.kind === 'conflict' || after.error.kind === 'dirty')
    ) {
      throw new AppError('PLAN_ERROR', `Plan ${planId} was not applied: ${after.error.message}`, {
        details: { planId, kind: after.error.kind, files: after.error.files ?? [], taskId: result.taskId },
        hint: after.error.hint,
      });
    }
    return result;
  }

  /** Cancels; with `clean`, the plan's sandboxes and branches are removed too (the plan record stays). */
  async cancel(
    planId: string,
    reason: string | undefined,
    principal: Principal,
    opts: { clean?: boolean | undefined } = {},
  ): Promise<PlanStatus> {
    const plan = await this.access.get(planId, principal);
    assertAllowed(plan, 'cancel');
    const current = plan.tasks[plan.phase];
    // The task first: its run stops (and reports nothing more) before the plan is cancelled.
    if (current) {
      try {
        await this.deps.tasks.cancel(current, principal);
      } catch (err) {
        if (!(err instanceof AppError && (err.reason === 'TASK_NOT_CANCELABLE' || err.reason === 'TASK_NOT_FOUND')))
          throw err;
      }
    }
    cancelPlan(plan, reason);
    await this.deps.engine.save(plan);
    if (opts.clean) await this.housekeeping.clean(plan);
    return this.queries.status(planId, principal);
  }

  async rollback(checkpointId: string, principal: Principal, planId?: string): Promise<PlanStatus> {
    const plan = planId
      ? await this.access.get(planId, principal)
      : await this.access.planOfCheckpoint(checkpointId, principal);
    this.access.assertIdle(plan, 'rollback');
    assertAllowed(plan, 'rollback');
    const cp = (await this.deps.plans.checkpoints(plan.id)).find((c) => c.id === checkpointId);
    if (!cp)
      throw new AppError('NOT_FOUND', `Checkpoint ${checkpointId} is not a checkpoint of plan ${plan.id}`, {
        hint: `see them with agents plan status ${plan.id}`,
      });
    const waiting = plan.waiting;
    requeueExecute(plan);
    await this.deps.engine.restore(plan, cp).catch((err: unknown) => {
      // A checkpoint from before a rebase sits on the old base: restoring it would undo the user's commits.
      throw new AppError(
        'INVALID_STATE',
        `Checkpoint ${cp.id} (${cp.label}) cannot be restored: ${err instanceof Error ? err.message : String(err)}`,
        {
          details: { planId: plan.id, checkpointId: cp.id },
          hint: `a checkpoint taken before agents plan rebase is on the old base; roll back to after-rebase or a later one (agents plan status ${plan.id})`,
        },
      );
    });
    moveCursor(plan, cp.stepIndex);
    await this.deps.engine.save(plan);
    await this.answers.closeWaiting(
      waiting,
      plan,
      `The request this task waited for is gone: the plan was rolled back to checkpoint ${cp.id}`,
      principal,
    );
    return this.queries.status(plan.id, principal);
  }

  /**
   * Guidance for a plan that errored (recorded, then the phase runs again), or the answer to the
   * approval it waits for: a clear yes approves; anything else rejects, with the text as guidance.
   */
  async prompt(planId: string, guidance: string, principal: Principal): Promise<RunResult> {
    const plan = await this.access.get(planId, principal);
    assertAllowed(plan, 'prompt');
    if (plan.waiting) return this.answers.answer(plan, parseApprovalAnswer({ text: guidance }), principal, true);
    this.access.assertIdle(plan, 'prompt');
    // What runs next with the guidance must be allowed before the guidance is recorded: a refusal changes nothing.
    const next = plan.phase === 'apply' ? 'apply' : plan.phase === 'strategize' && plan.actors ? undefined : 'execute';
    if (next) assertAllowed(plan, next);
    await this.deps.engine.record(plan, {
      type: 'guidance',
      question: 'Guidance from the user',
      chosen: guidance,
      rationale: guidance,
      context: { phase: plan.phase, state: plan.state, error: plan.error },
    });
    if (plan.phase === 'apply') return this.apply(planId, {}, principal);
    if (plan.phase === 'strategize' && plan.actors) {
      // The strategy actor failed (off the schema, a provider error): it strategizes again with the guidance.
      const live = (await this.deps.plans.decisions(plan.id)).filter(
        (d) => !d.superseded && (d.type === 'strategy' || d.type === 'choice'),
      );
      const fromIndex = live.filter((d) => d.type === 'choice').length;
      return this.runOn(plan, 'strategize', principal, true, (task) =>
        this.deps.engine.replan(plan.id, task, { kept: live, fromIndex, guidance }),
      );
    }
    return this.execute(planId, {}, principal);
  }

  /** Approves what the plan waits for (a tool call, or the apply), and continues the run. */
  approve(
    planId: string,
    opts: { wait?: boolean | undefined; always?: 'command' | 'tool' | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    return this.answers.approve(planId, opts, principal);
  }

  /** Rejects what the plan waits for (with guidance: what to do instead), and continues the run. */
  reject(
    planId: string,
    opts: { guidance?: string | undefined; wait?: boolean | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    return this.answers.reject(planId, opts, principal);
  }

  correct(input: CorrectInput, principal: Principal, planId?: string): Promise<Correction> {
    return this.corrections.correct(input, principal, planId);
  }

  // ---- housekeeping (PlanHousekeeping) ------------------------------------------------------------

  /** Rebases the plan's sandboxes onto the current head of their target branch (`continue`: after resolving conflicts). */
  rebase(planId: string, opts: { continue?: boolean | undefined }, principal: Principal): Promise<PlanRebase> {
    return this.housekeeping.rebase(planId, opts, principal);
  }

  /** Deletes the plan with its sandboxes and branches (unapplied changes only with `force`). */
  delete(planId: string, opts: { force?: boolean | undefined }, principal: Principal): Promise<PlanDeletion> {
    return this.housekeeping.delete(planId, opts, principal);
  }

  /** Deletes the caller's plans that match (default: applied and cancelled, older than 7 days). */
  prune(input: PruneInput, principal: Principal): Promise<PlanPrune> {
    return this.housekeeping.prune(input, principal);
  }

  // ---- the read side (PlanQueries) -----------------------------------------------------------------

  /** The caller's plan as stored (NOT_FOUND for one that is not theirs), for other services. */
  get(planId: string, principal: Principal): Promise<Plan> {
    return this.access.get(planId, principal);
  }

  status(planId: string, principal: Principal): Promise<PlanStatus> {
    return this.queries.status(planId, principal);
  }

  tree(planId: string, showSuperseded: boolean, principal: Principal): Promise<PlanTree> {
    return this.queries.tree(planId, showSuperseded, principal);
  }

  explain(decisionId: string, principal: Principal, planId?: string): Promise<DecisionExplanation> {
    return this.queries.explain(decisionId, principal, planId);
  }

  diff(planId: string, principal: Principal): Promise<PlanDiff> {
    return this.queries.diff(planId, principal);
  }

  artifacts(planId: string, principal: Principal): Promise<PlanArtifacts> {
    return this.queries.artifacts(planId, principal);
  }

  list(
    input: PlanListInput,
    principal: Principal,
  ): Promise<{ plans: PlanStatus[]; nextPageToken: string; totalSize: number }> {
    return this.queries.list(input, principal);
  }

  // ---- the plan's context, as TaskService sees it (ContextOwner, answered by PlanAnswers) --------

  ownerOf(contextId: string): Promise<string | undefined> {
    return this.answers.ownerOf(contextId);
  }

  onInput(task: Readonly<Task>, message: Message, principal: Principal): Promise<OwnedRun> {
    return this.answers.onInput(task, message, principal);
  }

  /** Settles plans a stopped process left `processing` (see settleInterruptedPlans). */
  settleInterrupted(
    isStranded: (taskId: string) => Promise<boolean | 'missing'>,
    graceMs = MISSING_TASK_GRACE_MS,
  ): Promise<string[]> {
    return settleInterruptedPlans(
      { plans: this.deps.plans, engine: this.deps.engine, now: this.now },
      isStranded,
      graceMs,
    );
  }

  // ---- internals -------------------------------------------------------------------------------

  /** Runs one phase as a new task of the plan's context, reporting on it. */
  private async runOn(
    plan: Plan,
    op: 'strategize' | 'execute' | 'apply',
    principal: Principal,
    wait: boolean,
    run: OwnedRun,
  ): Promise<RunResult> {
    const task = await this.deps.tasks.startOwnedTask(
      { contextId: plan.contextId, text: `${op} plan ${plan.id}`, wait },
      principal,
      run,
    );
    return { plan: await this.queries.status(plan.id, principal), taskId: task.id, task };
  }
}
