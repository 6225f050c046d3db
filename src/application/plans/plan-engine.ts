import type { ApprovalAnswer } from '../../domain/plan/approval.ts';
import type { Checkpoint, Decision, Plan, Waiting } from '../../domain/plan/plan.ts';
import { PlanError } from '../../domain/plan/plan.ts';
import { declineApply, failPhase, requeueExecute, takeAnswer } from '../../domain/plan/plan-state.ts';
import { AppError } from '../../domain/errors.ts';
import type { SandboxDiff, SandboxManager } from '../ports/sandbox.port.ts';
import { applyChanges } from './apply-phase.ts';
import { executeSteps } from './execute-phase.ts';
import { PlanStopped, PlanWorkbench, type PlanEngineDeps, type TaskHandle } from './plan-workbench.ts';
import { strategize } from './strategize-phase.ts';
import { strategizeWithActor, type Replan } from './llm/strategize-llm.ts';

export { PLAN_META, type PlanEngineDeps, type TaskHandle } from './plan-workbench.ts';

export interface RunOptions {
  /** Approve every request of this run (tool calls and apply). */
  yes: boolean;
}

/**
 * Runs plan phases, each on the A2A task it is handed: strategize (one decision per declared step), execute
 * (tool calls in the sandbox, checkpoints, approvals, budgets), apply (into the project). Every
 * change is saved before it is reported; a cancelled or restarted run leaves a consistent plan.
 * The engine is the run registry (which plans a run holds here); the phases live in their own modules.
 */
export class PlanEngine {
  private readonly open = new Map<string, Plan>();
  private readonly running = new Set<string>();
  private readonly wb: PlanWorkbench;

  constructor(deps: PlanEngineDeps) {
    this.wb = new PlanWorkbench(deps);
  }

  /** The plan as it stands (the in-memory copy while a run holds it). */
  async load(id: string): Promise<Plan | undefined> {
    return this.open.get(id) ?? (await this.wb.deps.plans.get(id));
  }

  /** Whether plans from a goal can run here (LLM providers and the context service are wired). */
  get runsActors(): boolean {
    return this.wb.deps.llm !== undefined;
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  save(plan: Plan): Promise<void> {
    return this.wb.save(plan);
  }

  /** Strategizes a new plan on its task. */
  async strategizeOn(planId: string, task: TaskHandle): Promise<void> {
    await this.hold(planId, task, async (plan) =>
      plan.actors ? strategizeWithActor(this.wb, plan, task, task.signal) : strategize(this.wb, plan, task, 0),
    );
  }

  /** Runs (or resumes) the execute phase on its task. */
  async execute(planId: string, task: TaskHandle, opts: RunOptions): Promise<void> {
    await this.hold(planId, task, async (plan) => executeSteps(this.wb, plan, task, opts.yes));
  }

  /** Runs the apply phase on its task (asking for approval first unless `yes` or the auto profile). */
  async apply(planId: string, task: TaskHandle, opts: RunOptions): Promise<void> {
    await this.hold(planId, task, async (plan) => applyChanges(this.wb, plan, task, opts.yes));
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
      await this.wb.record(plan, {
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
          await this.wb.save(plan);
          return task.status(
            'TASK_STATE_CANCELED',
            `Apply declined${answer.guidance ? ` (${answer.guidance})` : ''}; the plan stays ready to apply`,
            this.wb.meta(plan),
          );
        }
        return applyChanges(this.wb, plan, task, true);
      }
      return executeSteps(this.wb, plan, task, false);
    });
  }

  /** Re-plans a plan from a goal from a corrected decision, with the user's guidance, on its task. */
  async replan(planId: string, task: TaskHandle, replan: Replan): Promise<void> {
    await this.hold(planId, task, async (plan) => {
      await strategizeWithActor(this.wb, plan, task, task.signal, replan);
      // A plan that had a sandbox runs execute again from the checkpoint the correction restored.
      if (plan.sandboxes.length && plan.phase === 'strategize' && plan.state === 'complete') {
        requeueExecute(plan);
        await this.wb.save(plan);
      }
    });
  }

  /** Records one decision per declared step of the action (from `fromStep` on); used by correct. */
  strategize(plan: Plan, turn: TaskHandle | undefined, fromStep: number, guidance?: string): Promise<Decision[]> {
    return strategize(this.wb, plan, turn, fromStep, guidance);
  }

  // ---- helpers used by the plan service ------------------------------------------------------

  restore(plan: Plan, cp: Checkpoint): Promise<void> {
    return this.wb.restore(plan, cp);
  }

  diffs(plan: Plan): Promise<Array<{ resource: string; diff: SandboxDiff }>> {
    return this.wb.diffs(plan);
  }

  record(plan: Plan, d: Parameters<PlanWorkbench['record']>[1]): Promise<Decision> {
    return this.wb.record(plan, d);
  }

  checkpoint(plan: Plan, label: string, stepIndex: number): Promise<Checkpoint> {
    return this.wb.checkpoint(plan, label, stepIndex);
  }

  /** The sandbox manager the phases use (rebase and clean-up work on the same sandboxes). */
  get sandboxes(): SandboxManager {
    return this.wb.deps.sandboxes;
  }

  /** Runs `fn` holding the plan: its in-memory copy is the one every reader sees until the run ends. */
  private async hold(planId: string, turn: TaskHandle, fn: (plan: Plan) => Promise<unknown>): Promise<void> {
    const plan = await this.load(planId);
    if (!plan) {
      await turn.status('TASK_STATE_FAILED', `Plan ${planId} was not found`);
      return;
    }
    this.open.set(planId, plan);
    this.running.add(planId);
    const unwatch = this.wb.watchPhases(plan, turn);
    try {
      await fn(plan);
    } catch (err) {
      if (!(err instanceof PlanStopped)) {
        if (turn.signal.aborted) return;
        const refused = err instanceof AppError && err.reason === 'INVALID_STATE';
        const { logger } = this.wb.deps;
        if (refused) logger.warn({ err, planId }, 'plan run refused a transition');
        else logger.error({ err, planId }, 'plan run failed');
        const error: PlanError = await this.wb.shown(plan, {
          kind: 'internal',
          message: err instanceof Error ? err.message : String(err),
          recoverable: true,
          hint: `run agents plan execute ${planId} to resume from the last checkpoint`,
          // A refusal that says what it is and what to do (a nested repository in a sandbox…) is recorded as such.
          ...(err instanceof AppError && err.reason === 'PLAN_ERROR' ? refusal(err) : {}),
        });
        // A refused transition changed nothing: the plan stays as it is; anything else stops the phase.
        if (!refused && plan.state === 'processing') {
          failPhase(plan, plan.phase, error);
          await this.wb.save(plan);
        }
        await turn.status('TASK_STATE_FAILED', `Plan error: ${error.message}`, this.wb.meta(plan));
      }
    } finally {
      unwatch();
      this.running.delete(planId);
      this.open.delete(planId);
    }
  }
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
