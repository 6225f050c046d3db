import type { ApprovalAnswer } from '../../domain/plan/approval.ts';
import type { Plan, Waiting } from '../../domain/plan/plan.ts';
import { PlanError } from '../../domain/plan/plan.ts';
import { declineApply, failPhase, requeueExecute, takeAnswer } from '../../domain/plan/plan-state.ts';
import { AppError } from '../../domain/errors.ts';
import type { Principal } from '../ports/principal.ts';
import { applyChanges } from './apply.phase.ts';
import { executeSteps } from './execute.phase.ts';
import { planMeta, type PlanRunPorts, PlanStopped, type TaskHandle } from './plan.recorder.ts';
import { strategize } from './strategize.phase.ts';
import { strategizeWithActor, type Replan } from './llm/strategize-llm.phase.ts';

export { PLAN_META, type TaskHandle } from './plan.recorder.ts';

/** What the engine runs phases with: every port some phase uses (each phase takes its own). */
export type PlanEngineDeps = PlanRunPorts;

export interface RunOptions {
  /** Approve every request of this run (tool calls and apply). */
  yes: boolean;
  /** Who started the run: the audit log names them for an apply. */
  by?: Principal | undefined;
}

/**
 * Runs plan phases, each on the A2A task it is handed: strategize (one decision per declared step), execute
 * (tool calls in the sandbox, checkpoints, approvals, budgets), apply (into the project). Every
 * change is saved before it is reported; a cancelled or restarted run leaves a consistent plan.
 * The engine is the run registry (which plans a run holds here, and their in-memory copies) and
 * hands each phase module the ports it names; saving and reporting are the PlanRecorder's.
 */
export class PlanEngine {
  private readonly open = new Map<string, Plan>();
  private readonly holding = new Set<string>();
  /** The ids of the plans a run holds now: a command that must wait for the run refuses them. */
  readonly running: ReadonlySet<string> = this.holding;
  private readonly io: PlanRunPorts;

  constructor(deps: PlanEngineDeps) {
    this.io = deps;
  }

  /** The plan as it stands (the in-memory copy while a run holds it). */
  async load(id: string): Promise<Plan | undefined> {
    return this.open.get(id) ?? (await this.io.plans.get(id));
  }

  /** Whether plans from a goal can run here (LLM providers and the context service are wired). */
  get runsActors(): boolean {
    return this.io.llm !== undefined;
  }

  /** Strategizes a new plan on its task. */
  async strategizeOn(planId: string, task: TaskHandle): Promise<void> {
    await this.hold(planId, task, async (plan) =>
      plan.actors ? strategizeWithActor(this.io, plan, task, task.signal) : strategize(this.io, plan, task, 0),
    );
  }

  /** Runs (or resumes) the execute phase on its task. */
  async execute(planId: string, task: TaskHandle, opts: RunOptions): Promise<void> {
    await this.hold(planId, task, async (plan) => executeSteps(this.io, plan, task, opts.yes));
  }

  /** Runs the apply phase on its task (asking for approval first unless `yes` or the auto profile). */
  async apply(planId: string, task: TaskHandle, opts: RunOptions): Promise<void> {
    await this.hold(planId, task, async (plan) => applyChanges(this.io, plan, task, opts.yes, opts.by));
  }

  /**
   * Continues a run that waits for the user with their answer, on the task that waits (the plan
   * service has checked the owner and the state; the plan model checks the task again here).
   */
  async answer(
    planId: string,
    answer: ApprovalAnswer,
    task: TaskHandle,
    request: Pick<Waiting, 'kind' | 'decisionId'> & { callId?: unknown },
    by?: Principal,
  ): Promise<void> {
    await this.hold(planId, task, async (plan) => {
      // Two answers accepted at once: the first continued the run; the second answers a request
      // that is gone (the same task may already wait for the next one), so it answers nothing.
      const now = plan.waiting;
      if (
        !now ||
        now.taskId !== task.task.id ||
        now.kind !== request.kind ||
        now.decisionId !== request.decisionId ||
        now.request['callId'] !== request.callId
      )
        return;
      const waiting = takeAnswer(plan, task.task.id);
      await this.io.recorder.record(plan, {
        type: 'approval',
        parentId: waiting.decisionId,
        question: waiting.kind === 'apply-approval' ? 'Apply the changes to the project?' : 'Run this tool call?',
        chosen: answer.decision,
        rationale: answer.guidance ?? (answer.decision === 'approve' ? 'approved by the user' : 'rejected by the user'),
        context: {
          request: waiting.request,
          ...(answer.guidance ? { guidance: answer.guidance } : {}),
          ...(answer.always ? { always: answer.always } : {}),
        },
      });
      if (waiting.kind === 'apply-approval') {
        if (answer.decision === 'reject') {
          declineApply(plan);
          await this.io.recorder.save(plan);
          return task.status(
            'TASK_STATE_CANCELED',
            `Apply declined${answer.guidance ? ` (${answer.guidance})` : ''}; the plan stays ready to apply`,
            planMeta(plan),
          );
        }
        return applyChanges(this.io, plan, task, true, by);
      }
      return executeSteps(this.io, plan, task, false);
    });
  }

  /** Re-plans a plan from a goal from a corrected decision, with the user's guidance, on its task. */
  async replan(planId: string, task: TaskHandle, replan: Replan): Promise<void> {
    await this.hold(planId, task, async (plan) => {
      await strategizeWithActor(this.io, plan, task, task.signal, replan);
      // A plan that had a sandbox runs execute again from the checkpoint the correction restored.
      if (plan.sandboxes.length && plan.phase === 'strategize' && plan.state === 'complete') {
        requeueExecute(plan);
        await this.io.recorder.save(plan);
      }
    });
  }

  /** Runs `fn` holding the plan: its in-memory copy is the one every reader sees until the run ends. */
  private async hold(planId: string, turn: TaskHandle, fn: (plan: Plan) => Promise<unknown>): Promise<void> {
    const plan = await this.load(planId);
    if (!plan) {
      await turn.status('TASK_STATE_FAILED', `Plan ${planId} was not found`);
      return;
    }
    this.open.set(planId, plan);
    this.holding.add(planId);
    const unwatch = this.io.recorder.watchPhases(plan, turn);
    try {
      await fn(plan);
    } catch (err) {
      if (!(err instanceof PlanStopped)) {
        if (turn.signal.aborted) return;
        const refused = err instanceof AppError && err.reason === 'INVALID_STATE';
        const { logger } = this.io;
        if (refused) logger.warn({ err, planId }, 'plan run refused a transition');
        else logger.error({ err, planId }, 'plan run failed');
        const error: PlanError = await this.io.recorder.shown(plan, {
          kind: 'internal',
          message: err instanceof Error ? err.message : String(err),
          recoverable: true,
          // execute is refused after a failed apply: there the apply is what to run again.
          hint:
            plan.phase === 'apply'
              ? `run agents plan apply ${planId} to try the apply again`
              : `run agents plan execute ${planId} to resume from the last checkpoint`,
          // A refusal that says what it is and what to do (a nested repository in a sandbox…) is recorded as such;
          // another error with its own hint (a git-remote that cannot be reached) keeps that hint.
          ...(err instanceof AppError ? (err.reason === 'PLAN_ERROR' ? refusal(err) : ownHint(err)) : {}),
        });
        // A refused transition changed nothing: the plan stays as it is; anything else stops the phase.
        if (!refused && plan.state === 'processing') {
          failPhase(plan, plan.phase, error);
          await this.io.recorder.save(plan);
        }
        await turn.status('TASK_STATE_FAILED', `Plan error: ${error.message}`, planMeta(plan));
      }
    } finally {
      unwatch();
      this.holding.delete(planId);
      this.open.delete(planId);
    }
  }
}

/** The hint another AppError carries (what to check: a remote's URL, its credentials), as a PlanError's. */
function ownHint(err: AppError): Partial<PlanError> {
  return err.hint ? { hint: err.hint } : {};
}

/** The kind, hint and files a PLAN_ERROR carries (`details.kind`, `details.files`, its hint), as a PlanError's. */
function refusal(err: AppError): Partial<PlanError> {
  const kind = PlanError.shape.kind.safeParse(err.details['kind']);
  const files = err.details['files'];
  return {
    ...(kind.success ? { kind: kind.data } : {}),
    ...(err.hint ? { hint: err.hint } : {}),
    ...(Array.isArray(files) ? { files: files.map(String) } : {}),
  };
}
