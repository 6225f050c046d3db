import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { Message, Task } from '../../domain/a2a.model.ts';
import { parseApprovalAnswer, type ApprovalAnswer } from '../../domain/plan/approval.ts';
import { type Plan } from '../../domain/plan/plan.ts';
import { assertAllowed } from '../../domain/plan/plan-state.ts';
import type { Principal } from '../ports/principal.ts';
import type { ContextOwner, OwnedRun } from '../tasks/task.service.ts';
import { planIdOfContext, type PlanAccess } from './plan-access.service.ts';
import type { PlanQueries } from './plan-queries.service.ts';
import type { PlanServiceDeps, RunResult } from './plan.types.ts';

/**
 * Answers to what a plan waits for (a tool call's or the apply's approval). Every answer — from
 * approve, reject or prompt, or a message a client sends on the waiting task — is a message on that
 * task, so it takes one way in (onInput, the plan's side of TaskService's ContextOwner), which
 * checks the owner, the task and the state before the run continues, and is kept in the task's
 * history. A request the plan no longer waits for has its task ended (closeWaiting).
 */
export class PlanAnswers implements ContextOwner {
  private readonly deps: Pick<PlanServiceDeps, 'engine' | 'tasks' | 'recorder'>;
  private readonly access: PlanAccess;
  private readonly queries: PlanQueries;

  constructor(deps: Pick<PlanServiceDeps, 'engine' | 'tasks' | 'recorder'>, access: PlanAccess, queries: PlanQueries) {
    this.deps = deps;
    this.access = access;
    this.queries = queries;
  }

  /** Approves what the plan waits for (a tool call, or the apply), and continues the run. */
  async approve(
    planId: string,
    opts: { wait?: boolean | undefined; always?: 'command' | 'tool' | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.access.get(planId, principal);
    assertAllowed(plan, 'approve');
    const answer = opts.always
      ? { decision: 'approve' as const, always: opts.always }
      : { decision: 'approve' as const };
    return this.answer(plan, answer, principal, opts.wait ?? true);
  }

  /** Rejects what the plan waits for (with guidance: what to do instead), and continues the run. */
  async reject(
    planId: string,
    opts: { guidance?: string | undefined; wait?: boolean | undefined },
    principal: Principal,
  ): Promise<RunResult> {
    const plan = await this.access.get(planId, principal);
    assertAllowed(plan, 'reject');
    const guidance = opts.guidance?.trim();
    return this.answer(
      plan,
      guidance ? { decision: 'reject', guidance } : { decision: 'reject' },
      principal,
      opts.wait ?? true,
    );
  }

  /**
   * Answers the waiting request with a message on its task, so that every answer — from a method
   * or sent by a client — takes the same way in (onInput) and is kept in the task's history.
   */
  async answer(plan: Plan, answer: ApprovalAnswer, principal: Principal, wait: boolean): Promise<RunResult> {
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
    return { plan: await this.queries.status(plan.id, principal), taskId, task: 'task' in r ? r.task : undefined };
  }

  /** Ends the task of a request the plan no longer waits for, so that its subscribers see the end. */
  async closeWaiting(waiting: Plan['waiting'], plan: Plan, why: string, principal: Principal): Promise<void> {
    if (!waiting || plan.waiting?.taskId === waiting.taskId) return;
    await this.deps.tasks.fail(waiting.taskId, why, principal).catch(() => {});
  }

  // ---- the plan's context, as TaskService sees it (ContextOwner) ----------------------------------

  async ownerOf(contextId: string): Promise<string | undefined> {
    const planId = planIdOfContext(contextId);
    if (planId === undefined) return undefined;
    const plan = await this.deps.engine.load(planId);
    return plan?.contextId === contextId ? 'a plan' : undefined;
  }

  /**
   * A message on one of a plan's tasks: only an answer to the approval this very task waits for,
   * from the plan's owner, while the plan's state allows it. Anything else is refused and stored
   * nowhere. The answer is read by the one parser (parseApprovalAnswer).
   */
  async onInput(task: Readonly<Task>, message: Message, principal: Principal): Promise<OwnedRun> {
    const plan = await this.access.get(planIdOfContext(task.contextId) ?? '', principal);
    this.access.assertIdle(plan, 'prompt');
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
    // The answer continues the run in the sandbox (a tool call, or the apply): refused here, it is stored nowhere.
    await this.deps.recorder.assertReachable(plan);
    const answer = parseApprovalAnswer(answerParts(message));
    const w = plan.waiting;
    // A goal plan's calls all wait under its strategy decision: the call id tells them apart.
    const request = { kind: w.kind, decisionId: w.decisionId, callId: w.request['callId'] };
    return (handle) => this.deps.engine.answer(plan.id, answer, handle, request, principal);
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
