import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { pageOf } from '../../domain/paging.js';
import type { Message, Task } from '../../domain/a2a.model.js';
import { parseApprovalAnswer, type ApprovalAnswer } from '../../domain/plan/approval.js';
import {
  assertAllowed,
  cancelPlan,
  failPhase,
  isAllowed,
  planNetwork,
  renderTemplate,
  requeueExecute,
  type Decision,
  type Phase,
  type PhaseState,
  type Plan,
  type PlanOperation,
} from '../../domain/plan/plan.js';
import type { PolicySnapshot } from '../../domain/plan/policy.js';
import { DEFAULT_AUTOMATION_PROFILE } from '../../domain/registry/builtins.js';
import {
  profileEntityName,
  type ActionDefinition,
  type AutomationProfileDefinition,
  type ProjectDefinition,
} from '../../domain/registry/entities.js';
import type { Principal } from '../ports/principal.js';
import type { PlanRepository } from '../ports/plan.repository.port.js';
import type { RegistryService } from '../registry/registry.service.js';
import type { ContextOwner, OwnedRun, TaskService } from '../tasks/task.service.js';
import { resolveArguments } from './arguments.js';
import type { PlanEngine } from './plan-engine.js';
import {
  StoredDiff,
  type Correction,
  type DecisionExplanation,
  type PlanArtifacts,
  type PlanDiff,
  type PlanTree,
} from '../../domain/plan/plan-views.js';
import { artifactsOf, decisionTree, statusOf, type PlanStatus } from './plan-views.js';

export interface UseInput {
  action: string;
  projects: string[];
  arguments?: Record<string, unknown> | undefined;
  /** An automation profile entity (`manual`, `trusted`, `auto`: the built-ins). */
  automationProfile?: string | undefined;
  maxToolCalls?: number | undefined;
  maxWallSeconds?: number | undefined;
  wait?: boolean | undefined;
}

export interface RunResult {
  plan: PlanStatus;
  taskId: string;
  task?: Task | undefined;
}

export interface CorrectInput {
  decisionId: string;
  mode: 'revert' | 'append';
  guidance: string;
  dryRun?: boolean | undefined;
}

export interface PlanListInput {
  phase?: Phase | undefined;
  state?: PhaseState | undefined;
  project?: string | undefined;
  action?: string | undefined;
  nameRegex?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
}

export interface PlanServiceDeps {
  plans: PlanRepository;
  registry: RegistryService;
  tasks: TaskService;
  engine: PlanEngine;
  now?: () => Date;
}

/** A plan's A2A context: its tasks (one per phase run) live there, and nothing else does. */
const CONTEXT_PREFIX = 'plan-';

/**
 * The plan lifecycle behind the `_cleveragents/plan/…` methods. Each phase runs on an A2A task of
 * the plan's context that this service owns (TaskService.startOwnedTask): no actor, no chat. An
 * answer to an approval request — by a method or a message on the waiting task — comes through
 * here (onInput), which checks the owner, the task and the state before the run continues.
 */
/** How long a processing plan whose phase task is not stored is taken to be starting up elsewhere. */
const MISSING_TASK_GRACE_MS = 60_000;

export class PlanService implements ContextOwner {
  private readonly now: () => Date;

  constructor(private readonly deps: PlanServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async use(input: UseInput, principal: Principal): Promise<RunResult> {
    const action = await this.deps.registry.show('action', input.action, principal);
    const def = action.definition as unknown as ActionDefinition;
    if (!def.steps?.length) {
      throw new AppError(
        'INVALID_STATE',
        `Action ${action.name} declares no steps; only deterministic (stepped) actions can be planned in this release`,
        {
          details: { action: action.name },
          hint: 'add steps to the action, or use builtin/replace or builtin/run-command',
        },
      );
    }
    if (input.projects.length === 0)
      throw new AppError('INVALID_PARAMS', 'A plan needs at least one project', {
        fields: [{ field: 'projects', description: 'name at least one project' }],
      });
    let profile: string | undefined = input.automationProfile;
    const networks: Array<'none' | 'allow' | undefined> = [];
    for (const name of input.projects) {
      const p = await this.deps.registry.show('project', name, principal);
      const project = p.definition as unknown as ProjectDefinition;
      profile ??= project.settings?.automationProfile;
      networks.push(project.settings?.network);
      for (const r of p.derived['resources'] as Array<{ name: string; exists: boolean; missing?: boolean }>) {
        if (!r.exists)
          throw new AppError(
            'INVALID_STATE',
            `Resource ${r.name} of project ${name} ${r.missing ? 'is not registered' : 'has no directory on disk'}`,
            { hint: `see agents project show ${name}` },
          );
      }
    }
    const args = resolveArguments(def, input.arguments ?? {});
    const at = this.now().toISOString();
    const policy = await this.snapshotProfile(profile ?? DEFAULT_AUTOMATION_PROFILE, at, principal);
    const id = newId();
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
      owner: principal.id,
      createdAt: at,
      updatedAt: at,
      budget: { maxToolCalls: input.maxToolCalls ?? 100, maxWallMs: (input.maxWallSeconds ?? 1800) * 1000 },
      usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
      cursor: 0,
      stepsTotal: def.steps.length,
      sandboxes: [],
      network: planNetwork(networks, def.network),
    };
    await this.deps.plans.create(plan);
    return this.runOn(plan, 'strategize', principal, input.wait ?? true, (task) =>
      this.deps.engine.strategizeOn(plan.id, task),
    );
  }

  /** The profile's rules as they are now: the plan keeps this copy whatever happens to the profile later. */
  private async snapshotProfile(ref: string, at: string, principal: Principal): Promise<PolicySnapshot> {
    const e = await this.deps.registry.show('automation-profile', profileEntityName(ref), principal);
    const d = e.definition as unknown as AutomationProfileDefinition;
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
    },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.get(planId, principal);
    this.assertIdle(plan, 'execute');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'execute');
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
    if (opts.maxToolCalls) plan.budget.maxToolCalls = opts.maxToolCalls;
    if (opts.maxWallSeconds) plan.budget.maxWallMs = opts.maxWallSeconds * 1000;
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
    const plan = await this.get(planId, principal);
    this.assertIdle(plan, 'apply');
    if (plan.waiting) throw waitingError(plan);
    assertAllowed(plan, 'apply');
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

  async cancel(planId: string, reason: string | undefined, principal: Principal): Promise<PlanStatus> {
    const plan = await this.get(planId, principal);
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
    return this.status(planId, principal);
  }

  async status(planId: string, principal: Principal): Promise<PlanStatus> {
    const plan = await this.get(planId, principal);
    return statusOf(
      plan,
      await this.deps.plans.decisions(planId),
      await this.deps.plans.toolCalls(planId),
      await this.deps.plans.checkpoints(planId),
      this.deps.engine.isRunning(planId),
    );
  }

  async tree(planId: string, showSuperseded: boolean, principal: Principal): Promise<PlanTree> {
    const plan = await this.get(planId, principal);
    return {
      planId,
      attempt: plan.attempt,
      decisions: decisionTree(await this.deps.plans.decisions(planId), showSuperseded),
    };
  }

  async explain(decisionId: string, principal: Principal, planId?: string): Promise<DecisionExplanation> {
    const { plan, decision, all } = await this.findDecision(decisionId, principal, planId);
    const calls = (await this.deps.plans.toolCalls(plan.id)).filter((c) => c.decisionId === decision.id);
    const checkpoint = (await this.deps.plans.checkpoints(plan.id)).find((c) => c.decisionId === decision.id);
    return {
      planId: plan.id,
      decision,
      parent: all.find((d) => d.id === decision.parentId),
      children: all.filter((d) => d.parentId === decision.id),
      toolCalls: calls,
      checkpointAfter: checkpoint,
    };
  }

  async correct(input: CorrectInput, principal: Principal, planId?: string): Promise<Correction> {
    const { plan, decision, all } = await this.findDecision(input.decisionId, principal, planId);
    this.assertIdle(plan, 'correct');
    assertAllowed(plan, 'correct');
    if (decision.superseded)
      throw new AppError('INVALID_STATE', `Decision ${decision.id} is already superseded`, {
        hint: `see the current tree with agents plan tree ${plan.id}`,
      });
    const from = decision.type === 'step' ? (decision.stepIndex ?? 0) : 0;
    const affected =
      input.mode === 'append'
        ? []
        : all.filter(
            (d) =>
              !d.superseded &&
              (d.id === decision.id ||
                (d.type !== 'strategy' && (d.stepIndex ?? stepOfParent(all, d)) >= from) ||
                (decision.type === 'strategy' && d.type !== 'guidance')),
          );
    const checkpoints = await this.deps.plans.checkpoints(plan.id);
    const restoreTo = plan.sandboxes.length ? checkpoints.filter((c) => c.stepIndex <= from).at(-1) : undefined;
    if (input.dryRun) {
      if (input.mode === 'append')
        return {
          planId: plan.id,
          mode: 'append',
          dryRun: true,
          attempt: plan.attempt,
          wouldSupersede: [],
          wouldAdd: 'one guidance decision',
        };
      return {
        planId: plan.id,
        mode: input.mode,
        dryRun: true,
        attempt: plan.attempt,
        wouldSupersede: affected.map((d) => d.id),
        wouldRestoreCheckpoint: restoreTo?.id,
        wouldResumeAtStep: from + 1,
      };
    }
    plan.attempt++;
    const guidance = await this.deps.engine.record(plan, {
      type: 'guidance',
      parentId: input.mode === 'append' ? decision.id : decision.parentId,
      question: `Correction (${input.mode}) of ${decision.id}`,
      chosen: input.guidance,
      rationale: input.guidance,
      context: { corrects: decision.id, mode: input.mode },
    });
    if (input.mode === 'append') {
      await this.deps.engine.save(plan);
      return { planId: plan.id, mode: 'append', attempt: plan.attempt, added: [guidance.id], superseded: [] };
    }
    const waiting = plan.waiting;
    for (const d of affected) await this.deps.plans.putDecision({ ...d, superseded: true });
    if (restoreTo) await this.deps.engine.restore(plan, restoreTo);
    plan.cursor = Math.min(plan.cursor, from);
    plan.error = undefined;
    const made = await this.deps.engine.strategize(
      plan,
      undefined,
      decision.type === 'strategy' ? 0 : from,
      input.guidance,
    );
    if (plan.sandboxes.length) requeueExecute(plan);
    await this.deps.engine.save(plan);
    await this.closeWaiting(
      waiting,
      plan,
      'The request this task waited for was superseded by a correction of the plan',
      principal,
    );
    return {
      planId: plan.id,
      mode: 'revert',
      attempt: plan.attempt,
      superseded: affected.map((d) => d.id),
      added: [guidance.id, ...made.map((d) => d.id)],
      restoredCheckpoint: restoreTo?.id,
      resumeAtStep: from + 1,
    };
  }

  async diff(planId: string, principal: Principal): Promise<PlanDiff> {
    const plan = await this.get(planId, principal);
    if (plan.sandboxes.length) {
      const diffs = await this.deps.engine.diffs(plan);
      const stats = diffs.reduce(
        (a, d) => ({
          files: a.files + d.diff.stats.files,
          additions: a.additions + d.diff.stats.additions,
          deletions: a.deletions + d.diff.stats.deletions,
        }),
        { files: 0, additions: 0, deletions: 0 },
      );
      return {
        planId,
        source: 'sandbox',
        unified: diffs.map((d) => d.diff.unified).join(''),
        stats,
        sandboxes: diffs.map((d) => ({ resource: d.resource, files: d.diff.files, stats: d.diff.stats })),
      };
    }
    const stored = await this.storedDiff(plan, principal);
    if (stored) return { planId, source: plan.applied ? 'applied' : 'execute-task', ...stored };
    return { planId, source: 'none', unified: '', stats: { files: 0, additions: 0, deletions: 0 }, sandboxes: [] };
  }

  async artifacts(planId: string, principal: Principal): Promise<PlanArtifacts> {
    const diff = await this.diff(planId, principal);
    return { planId, files: artifactsOf(diff.sandboxes, await this.deps.plans.toolCalls(planId)) };
  }

  /**
   * Guidance for a plan that errored (recorded, then the phase runs again), or the answer to the
   * approval it waits for: a clear yes approves; anything else rejects, with the text as guidance.
   */
  async prompt(planId: string, guidance: string, principal: Principal): Promise<RunResult> {
    const plan = await this.get(planId, principal);
    assertAllowed(plan, 'prompt');
    if (plan.waiting) return this.answer(plan, parseApprovalAnswer({ text: guidance }), principal, true);
    this.assertIdle(plan, 'prompt');
    await this.deps.engine.record(plan, {
      type: 'guidance',
      question: 'Guidance from the user',
      chosen: guidance,
      rationale: guidance,
      context: { phase: plan.phase, state: plan.state, error: plan.error },
    });
    if (plan.phase === 'apply') return this.apply(planId, {}, principal);
    return this.execute(planId, {}, principal);
  }

  /** Approves what the plan waits for (a tool call, or the apply), and continues the run. */
  async approve(planId: string, opts: { wait?: boolean | undefined }, principal: Principal): Promise<RunResult> {
    const plan = await this.get(planId, principal);
    assertAllowed(plan, 'approve');
    return this.answer(plan, { decision: 'approve' }, principal, opts.wait ?? true);
  }

  /** Rejects what the plan waits for (with guidance: what to do instead), and continues the run. */
  async reject(
    planId: string,
    opts: { guidance?: string | undefined; wait?: boolean | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.get(planId, principal);
    assertAllowed(plan, 'reject');
    const guidance = opts.guidance?.trim();
    return this.answer(
      plan,
      guidance ? { decision: 'reject', guidance } : { decision: 'reject' },
      principal,
      opts.wait ?? true,
    );
  }

  // ---- the plan's context, as TaskService sees it (ContextOwner) ----------------------------------

  async ownerOf(contextId: string): Promise<string | undefined> {
    if (!contextId.startsWith(CONTEXT_PREFIX)) return undefined;
    const plan = await this.deps.engine.load(contextId.slice(CONTEXT_PREFIX.length));
    return plan?.contextId === contextId ? 'a plan' : undefined;
  }

  /**
   * A message on one of a plan's tasks: only an answer to the approval this very task waits for,
   * from the plan's owner, while the plan's state allows it. Anything else is refused and stored
   * nowhere. The answer is read by the one parser (parseApprovalAnswer).
   */
  async onInput(task: Readonly<Task>, message: Message, principal: Principal): Promise<OwnedRun> {
    const plan = await this.get(task.contextId.slice(CONTEXT_PREFIX.length), principal);
    this.assertIdle(plan, 'prompt');
    if (plan.waiting?.taskId !== task.id) {
      throw new AppError(
        'INVALID_STATE',
        plan.waiting
          ? `Task ${task.id} does not wait for an answer: plan ${plan.id} waits on task ${plan.waiting.taskId}`
          : `Task ${task.id} does not wait for an answer: plan ${plan.id} is ${plan.phase}/${plan.state}`,
        {
          details: { planId: plan.id, taskId: task.id, phase: plan.phase, state: plan.state },
          hint: `see agents plan status ${plan.id}`,
        },
      );
    }
    assertAllowed(plan, 'approve');
    const answer = parseApprovalAnswer(answerParts(message));
    const request = { kind: plan.waiting.kind, decisionId: plan.waiting.decisionId };
    return (handle) => this.deps.engine.answer(plan.id, answer, handle, request);
  }

  async rollback(checkpointId: string, principal: Principal, planId?: string): Promise<PlanStatus> {
    const plan = planId ? await this.get(planId, principal) : await this.planOfCheckpoint(checkpointId, principal);
    this.assertIdle(plan, 'rollback');
    assertAllowed(plan, 'rollback');
    const cp = (await this.deps.plans.checkpoints(plan.id)).find((c) => c.id === checkpointId);
    if (!cp)
      throw new AppError('NOT_FOUND', `Checkpoint ${checkpointId} is not a checkpoint of plan ${plan.id}`, {
        hint: `see them with agents plan status ${plan.id}`,
      });
    const waiting = plan.waiting;
    requeueExecute(plan);
    await this.deps.engine.restore(plan, cp);
    plan.cursor = cp.stepIndex;
    await this.deps.engine.save(plan);
    await this.closeWaiting(
      waiting,
      plan,
      `The request this task waited for is gone: the plan was rolled back to checkpoint ${cp.id}`,
      principal,
    );
    return this.status(plan.id, principal);
  }

  async list(
    input: PlanListInput,
    principal: Principal,
  ): Promise<{ plans: PlanStatus[]; nextPageToken: string; totalSize: number }> {
    let regex: RegExp | undefined;
    try {
      regex = input.nameRegex ? new RegExp(input.nameRegex) : undefined;
    } catch (err) {
      throw new AppError('INVALID_PARAMS', `nameRegex is not a valid regular expression: ${(err as Error).message}`, {
        fields: [{ field: 'nameRegex', description: 'must be a JavaScript regular expression' }],
      });
    }
    const all = (
      await this.deps.plans.list({ owner: principal.id, phase: input.phase, state: input.state, action: input.action })
    ).filter((p) => (!input.project || p.projects.includes(input.project)) && (!regex || regex.test(p.name)));
    // The repository lists newest first: (createdAt, id) descending.
    const page = pageOf(all, (p) => ({ key: p.createdAt, id: p.id }), {
      pageToken: input.pageToken,
      pageSize: input.pageSize ?? 50,
      order: 'desc',
    });
    const records = await this.deps.plans.recordsOf(page.items.map((p) => p.id));
    const plans = page.items.map((p) => {
      const r = records.get(p.id);
      return statusOf(
        p,
        r?.decisions ?? [],
        r?.toolCalls ?? [],
        r?.checkpoints ?? [],
        this.deps.engine.isRunning(p.id),
      );
    });
    return { plans, nextPageToken: page.nextPageToken, totalSize: all.length };
  }

  // ---- internals -------------------------------------------------------------------------------

  /** Ends the task of a request the plan no longer waits for, so that its subscribers see the end. */
  private async closeWaiting(waiting: Plan['waiting'], plan: Plan, why: string, principal: Principal): Promise<void> {
    if (!waiting || plan.waiting?.taskId === waiting.taskId) return;
    await this.deps.tasks.fail(waiting.taskId, why, principal).catch(() => {});
  }

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
    return { plan: await this.status(plan.id, principal), taskId: task.id, task };
  }

  /**
   * Answers the waiting request with a message on its task, so that every answer — from a method
   * or sent by a client — takes the same way in (onInput) and is kept in the task's history.
   */
  private async answer(plan: Plan, answer: ApprovalAnswer, principal: Principal, wait: boolean): Promise<RunResult> {
    const taskId = plan.waiting?.taskId ?? '';
    const text = answer.decision === 'approve' ? 'approve' : answer.guidance ? `reject: ${answer.guidance}` : 'reject';
    const message: Message = {
      messageId: newId(),
      role: 'ROLE_USER',
      taskId,
      parts: [{ text }, { data: { approval: answer }, mediaType: 'application/json' }],
    };
    const r = await this.deps.tasks.send(
      { message, configuration: { returnImmediately: !wait, historyLength: 0 } },
      principal,
    );
    return { plan: await this.status(plan.id, principal), taskId, task: 'task' in r ? r.task : undefined };
  }

  private async get(planId: string, principal: Principal): Promise<Plan> {
    const plan = await this.deps.engine.load(planId);
    if (!plan || plan.owner !== principal.id)
      throw new AppError('NOT_FOUND', `Plan ${planId} was not found`, {
        details: { entity: 'plan', id: planId },
        hint: 'list your plans with `agents plan list`',
      });
    return plan;
  }

  private assertIdle(plan: Plan, op: PlanOperation): void {
    if (this.deps.engine.isRunning(plan.id)) {
      throw new AppError(
        'INVALID_STATE',
        `Plan ${plan.id} is running (${plan.phase}/${plan.state}); ${op} must wait until it stops`,
        {
          details: {
            planId: plan.id,
            phase: plan.phase,
            state: plan.state,
            operation: op,
            allowed: isAllowed(plan, 'cancel') ? ['cancel', 'status'] : ['status'],
          },
          hint: `follow it with agents task watch ${plan.tasks[plan.phase] ?? ''}, or cancel it`,
        },
      );
    }
  }

  private async findDecision(
    decisionId: string,
    principal: Principal,
    planId?: string,
  ): Promise<{ plan: Plan; decision: Decision; all: Decision[] }> {
    const candidates = planId
      ? [await this.get(planId, principal)]
      : await this.deps.plans.list({ owner: principal.id });
    for (const plan of candidates) {
      const all = await this.deps.plans.decisions(plan.id);
      const decision = all.find((d) => d.id === decisionId);
      if (decision) return { plan: (await this.deps.engine.load(plan.id)) ?? plan, decision, all };
    }
    throw new AppError('NOT_FOUND', `Decision ${decisionId} was not found`, {
      details: { entity: 'decision', id: decisionId },
      hint: 'see decisions with `agents plan tree <plan-id>`',
    });
  }

  private async planOfCheckpoint(checkpointId: string, principal: Principal): Promise<Plan> {
    for (const plan of await this.deps.plans.list({ owner: principal.id })) {
      if ((await this.deps.plans.checkpoints(plan.id)).some((c) => c.id === checkpointId))
        return (await this.deps.engine.load(plan.id)) ?? plan;
    }
    throw new AppError('NOT_FOUND', `Checkpoint ${checkpointId} was not found`, {
      details: { entity: 'checkpoint', id: checkpointId },
      hint: 'checkpoints are listed by `agents plan status <plan-id>`',
    });
  }

  /** The diff artifact the execute task stored (after apply the sandbox is gone). */
  private async storedDiff(plan: Plan, principal: Principal): Promise<(StoredDiff & { unified: string }) | undefined> {
    if (!plan.tasks.execute) return undefined;
    const task = await this.deps.tasks.get(plan.tasks.execute, 0, principal).catch(() => undefined);
    const artifact = task?.artifacts?.find((a) => a.artifactId === 'diff');
    if (!artifact) return undefined;
    const unified = artifact.parts.find((p) => p.text !== undefined)?.text ?? '';
    const data = StoredDiff.safeParse(artifact.parts.find((p) => p.data !== undefined)?.data);
    return {
      unified,
      ...(data.success ? data.data : { stats: { files: 0, additions: 0, deletions: 0 }, sandboxes: [] }),
    };
  }

  /**
   * Plans left `processing` by a process that stopped (issue #8, defect 7): a plan no run of this
   * process holds, whose current phase's task is stranded (`isStranded`: no live process runs it,
   * or it is gone), becomes errored with an `interrupted` error saying how to resume. Works on the
   * stored plan only, whatever started the phase. Returns the ids of the plans settled.
   */
  async settleInterrupted(
    isStranded: (taskId: string) => Promise<boolean | 'missing'>,
    graceMs = MISSING_TASK_GRACE_MS,
  ): Promise<string[]> {
    const settled: string[] = [];
    for (const stored of await this.deps.plans.listByState('processing')) {
      // A plan waiting for the user's answer waits for no process.
      if (this.deps.engine.isRunning(stored.id) || stored.waiting) continue;
      const taskId = stored.tasks[stored.phase];
      const stranded = taskId ? await isStranded(taskId) : 'missing';
      if (stranded === false) continue;
      // A phase whose task is not stored (yet): another process may be starting it right now
      // (local mode runs one agent per CLI call over one database). Only an old one is stranded.
      if (stranded === 'missing' && this.now().getTime() - Date.parse(stored.updatedAt) < graceMs) continue;
      const plan = (await this.deps.plans.get(stored.id)) ?? stored;
      if (plan.state !== 'processing' || this.deps.engine.isRunning(plan.id)) continue;
      const resume: Record<typeof plan.phase, { hint: string; recoverable: boolean }> = {
        strategize: {
          hint: `strategize is read-only: start it again with agents plan use ${plan.action} ${plan.projects.join(' ')}`,
          recoverable: false,
        },
        execute: { hint: `agents plan execute ${plan.id} resumes from the last checkpoint`, recoverable: true },
        apply: { hint: `agents plan apply ${plan.id} tries the apply again`, recoverable: true },
      };
      failPhase(plan, plan.phase, {
        kind: 'interrupted',
        message: `the server restarted while the ${plan.phase} phase ran`,
        ...resume[plan.phase],
      });
      plan.updatedAt = this.now().toISOString();
      await this.deps.plans.save(plan);
      settled.push(plan.id);
    }
    return settled;
  }
}

/** The parts of a message an answer is read from: its text, and an `approval` data object. */
function answerParts(m: Message): { text: string; approval?: unknown } {
  const approval = m.parts
    .map((p) =>
      p.data && typeof p.data === 'object' && !Array.isArray(p.data)
        ? (p.data as Record<string, unknown>)['approval']
        : undefined,
    )
    .find((v) => v !== undefined);
  const text = m.parts.map((p) => p.text ?? '').join(' ');
  return approval === undefined ? { text } : { text, approval };
}

function stepOfParent(all: Decision[], d: Decision): number {
  const parent = all.find((p) => p.id === d.parentId);
  return parent?.stepIndex ?? -1;
}

function waitingError(plan: Plan): AppError {
  return new AppError('INVALID_STATE', `Plan ${plan.id} waits for your answer on task ${plan.waiting?.taskId}`, {
    details: {
      planId: plan.id,
      phase: plan.phase,
      state: plan.state,
      waiting: plan.waiting?.kind,
      allowed: ['approve', 'reject', 'prompt', 'cancel', 'status'],
    },
    hint: `answer it (agents plan approve ${plan.id}, agents plan reject ${plan.id} --guidance "…", or message/send on the task), or cancel the plan`,
  });
}
