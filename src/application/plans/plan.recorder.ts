import { newId } from '../../domain/ids.ts';
import type { Checkpoint, Decision, Phase, Plan, PlanError } from '../../domain/plan/plan.ts';
import { failPhase } from '../../domain/plan/plan-state.ts';
import type { ActorTurn } from '../ports/actor.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { PlanRepository } from '../ports/plan.repository.port.ts';
import type { SandboxDiff, SandboxManager, ToolRunner } from '../ports/sandbox.port.ts';
import type { RegistryService } from '../registry/registry.service.ts';
import type { PlanLlmDeps } from './llm/plan-model.ts';
import type { HookService } from '../hooks/hook.service.ts';
import type { AuditRecorder } from '../accounts/audit.service.ts';
import { notifyPlanHooks } from '../hooks/plan-hooks.ts';
import { touch } from '../../domain/plan/plan-progress.ts';

/**
 * The A2A task a run reports on: its status and artifact events, and the signal that cancels it.
 * PlanService gets one from TaskService (an owned task) and hands it to the engine.
 */
export type TaskHandle = Pick<ActorTurn, 'task' | 'signal' | 'status' | 'artifact' | 'stored' | 'by'>;

/**
 * The ports the plan's phases run with. Each phase names the ones it uses (`Pick<PlanRunPorts, …>`),
 * so its signature says what it touches; the engine holds them all and hands each phase its own.
 */
export interface PlanRunPorts {
  /** Saving the plan, its decisions and checkpoints, and reporting on its task. */
  recorder: PlanRecorder;
  plans: PlanRepository;
  registry: Pick<RegistryService, 'lookup' | 'use'>;
  sandboxes: SandboxManager;
  tools: ToolRunner;
  logger: Logger;
  commandTimeoutMs?: number | undefined;
  /** LLM providers and the context service (absent: plans from a goal are refused). */
  llm?: PlanLlmDeps | undefined;
  /** The hooks run around tool calls, on phase changes and around apply (absent: none). */
  hooks?: HookService | undefined;
  /** Where applies are recorded (who applied which plan, the commits), for an administrator. */
  audit?: AuditRecorder | undefined;
}

/** What the recorder writes to and reports through. */
export interface PlanRecorderDeps {
  plans: Pick<PlanRepository, 'save' | 'putDecision' | 'putCheckpoint'>;
  sandboxes: Pick<SandboxManager, 'checkpoint' | 'restore' | 'diff' | 'assertReachable'>;
  /** Host paths hidden from a server's users in what the plan's namespace reads (absent: shown as they are). */
  redactHostPaths?: ((text: string, namespace: string) => Promise<string>) | undefined;
  hooks?: HookService | undefined;
  logger: Logger;
  now?: () => Date;
}

export const PLAN_META = 'urn:cleveragents:plan';

/** Raised to stop a run after its failure has been saved and reported. */
export class PlanStopped extends Error {}

/**
 * What every phase and command shares to change a plan's record: saving the plan (with the
 * plan-phase hooks of a run that holds it), its decisions and checkpoints, and a failure reported
 * on the run's task. One instance per agent: the engine's runs and the plan service's commands save
 * through it, so a command's save of a running plan fires that run's hooks.
 */
export class PlanRecorder {
  readonly now: () => Date;
  /** The plans a run holds: the task their phase changes are reported on, and the last phase seen. */
  private readonly watched = new Map<string, { turn: TaskHandle; seen: Pick<Plan, 'phase' | 'state'> }>();

  private readonly deps: PlanRecorderDeps;

  constructor(deps: PlanRecorderDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  async save(plan: Plan): Promise<void> {
    touch(plan, this.now());
    await this.deps.plans.save(plan);
    const w = this.watched.get(plan.id);
    if (w && (w.seen.phase !== plan.phase || w.seen.state !== plan.state)) {
      const from = w.seen;
      w.seen = { phase: plan.phase, state: plan.state };
      await notifyPlanHooks(
        this.deps.hooks,
        'plan-phase',
        plan,
        w.turn,
        { phase: plan.phase, state: plan.state, from },
        this.deps.logger,
      );
    }
  }

  /** While a run holds the plan, each saved change of its phase or state fires the plan-phase hooks. */
  watchPhases(plan: Plan, turn: TaskHandle): () => void {
    const w = { turn, seen: { phase: plan.phase, state: plan.state } };
    this.watched.set(plan.id, w);
    return () => {
      if (this.watched.get(plan.id) === w) this.watched.delete(plan.id);
    };
  }

  /**
   * A checkpoint of every sandbox of the plan. `changed` holds, per resource, the paths that may
   * differ from the last checkpoint when they are known exactly (see SandboxManager.checkpoint).
   */
  async checkpoint(
    plan: Plan,
    label: string,
    stepIndex: number,
    decisionId?: string,
    changed?: Readonly<Record<string, readonly string[]>>,
  ): Promise<Checkpoint> {
    const commits: Record<string, string> = {};
    for (const sb of plan.sandboxes)
      commits[sb.resource] = await this.deps.sandboxes.checkpoint(
        sb,
        label,
        changed && Object.hasOwn(changed, sb.resource) ? changed[sb.resource] : undefined,
      );
    const cp: Checkpoint = {
      id: newId(),
      planId: plan.id,
      label,
      commits,
      stepIndex,
      createdAt: this.now().toISOString(),
    };
    if (decisionId) cp.decisionId = decisionId;
    await this.deps.plans.putCheckpoint(cp);
    return cp;
  }

  /**
   * Refuses (UNAVAILABLE, with where the sandbox is) an operation on a plan whose sandboxes this
   * instance cannot reach: each command that needs them calls it before it changes anything, so
   * the plan's state, phase and error stay as they were.
   */
  async assertReachable(plan: Readonly<Plan>, opts: { orGone?: boolean } = {}): Promise<void> {
    for (const sb of plan.sandboxes) await this.deps.sandboxes.assertReachable(sb, opts);
  }

  async restore(plan: Plan, cp: Checkpoint): Promise<void> {
    for (const sb of plan.sandboxes) {
      const commit = cp.commits[sb.resource];
      if (commit) await this.deps.sandboxes.restore(sb, commit);
    }
  }

  async diffs(plan: Plan): Promise<Array<{ resource: string; diff: SandboxDiff }>> {
    const out = [];
    for (const sb of plan.sandboxes) out.push({ resource: sb.resource, diff: await this.deps.sandboxes.diff(sb) });
    return out;
  }

  async record(
    plan: Plan,
    d: Omit<
      Decision,
      'id' | 'planId' | 'attempt' | 'createdAt' | 'superseded' | 'confidence' | 'alternatives' | 'context'
    > &
      Partial<Pick<Decision, 'confidence' | 'alternatives' | 'context'>>,
  ): Promise<Decision> {
    const decision: Decision = {
      alternatives: [],
      confidence: 1,
      context: {},
      ...d,
      id: newId(),
      planId: plan.id,
      attempt: plan.attempt,
      superseded: false,
      createdAt: this.now().toISOString(),
    };
    await this.deps.plans.putDecision(decision);
    return decision;
  }

  /** Text as the plan's namespace may read it: on a server, without the server's own directories. */
  async shownText(plan: Plan, text: string): Promise<string> {
    return (await this.deps.redactHostPaths?.(text, plan.owner)) ?? text;
  }

  /** The error as the plan's namespace may read it (see shownText). */
  async shown(plan: Plan, error: PlanError): Promise<PlanError> {
    return {
      ...error,
      message: await this.shownText(plan, error.message),
      ...(error.hint !== undefined ? { hint: await this.shownText(plan, error.hint) } : {}),
    };
  }

  /** Stops the phase: saves the plan as failed (or constrained), reports it on the task, and throws PlanStopped. */
  async fail(
    plan: Plan,
    turn: TaskHandle | undefined,
    phase: Phase,
    error: PlanError,
    state: 'errored' | 'constrained' = 'errored',
  ): Promise<never> {
    error = await this.shown(plan, error);
    failPhase(plan, phase, error, state);
    await this.save(plan);
    await turn?.status('TASK_STATE_FAILED', error.message + (error.hint ? `\nHint: ${error.hint}` : ''), {
      data: { planError: error },
      ...planMeta(plan),
    });
    throw new PlanStopped(error.message);
  }
}

export function totalStats(diffs: Array<{ diff: SandboxDiff }>): {
  files: number;
  additions: number;
  deletions: number;
} {
  return diffs.reduce(
    (acc, d) => ({
      files: acc.files + d.diff.stats.files,
      additions: acc.additions + d.diff.stats.additions,
      deletions: acc.deletions + d.diff.stats.deletions,
    }),
    { files: 0, additions: 0, deletions: 0 },
  );
}

/** The plan's progress as a task event's metadata (PLAN_META), with `extra`. */
export function planMeta(plan: Plan, extra: Record<string, unknown> = {}): { metadata: Record<string, unknown> } {
  return {
    metadata: {
      [PLAN_META]: {
        planId: plan.id,
        phase: plan.phase,
        state: plan.state,
        attempt: plan.attempt,
        stepsDone: plan.cursor,
        stepsTotal: plan.stepsTotal,
        ...extra,
      },
    },
  };
}
