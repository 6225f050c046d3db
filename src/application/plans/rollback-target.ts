import { AppError } from '../../domain/errors.ts';
import type { Checkpoint, Plan } from '../../domain/plan/plan.ts';
import type { Principal } from '../ports/principal.ts';
import type { PlanAccess } from './plan-access.service.ts';
import type { PlanServiceDeps } from './plan.types.ts';

/** What `plan rollback` was given: a checkpoint (the plan found from it), or a plan with `--to` or `--steps`. */
export interface RollbackInput {
  checkpointId?: string | undefined;
  planId?: string | undefined;
  /** Back this many steps: to the newest checkpoint taken at or before step `cursor - steps`. */
  steps?: number | undefined;
}

/** The plan's checkpoints as `agents plan status` shows them, one a line, for a message that names the right ids. */
export function checkpointLines(checkpoints: readonly Checkpoint[]): string {
  if (checkpoints.length === 0) return '  (the plan has no checkpoint yet)';
  return checkpoints.map((c) => `  ${c.id}  step ${c.stepIndex}  ${c.label}`).join('\n');
}

/**
 * The plan and checkpoint a rollback goes to. An id of the wrong kind — a plan's id or a
 * decision's where a checkpoint's is expected — is answered with what it is and the right ids.
 */
export async function rollbackTarget(
  deps: Pick<PlanServiceDeps, 'plans'>,
  access: PlanAccess,
  input: RollbackInput,
  principal: Principal,
): Promise<{ plan: Plan; checkpoint: Checkpoint }> {
  const plan = input.planId
    ? await access.get(input.planId, principal)
    : await planOfCheckpointOrKind(access, input.checkpointId ?? '', principal, deps);
  const checkpoints = await deps.plans.checkpoints(plan.id);
  const list = checkpointLines(checkpoints);
  const hint = `roll back with agents plan rollback ${plan.id} --to <checkpoint> or --steps N`;
  if (input.steps !== undefined) {
    const target = plan.cursor - input.steps;
    const found = checkpoints.filter((c) => c.stepIndex <= target).at(-1);
    if (found && target >= 0) return { plan, checkpoint: found };
    throw new AppError(
      'INVALID_PARAMS',
      `Plan ${plan.id} is at step ${plan.cursor}: it has no checkpoint ${input.steps} step${input.steps === 1 ? '' : 's'} back. Its checkpoints:\n${list}`,
      {
        details: {
          planId: plan.id,
          cursor: plan.cursor,
          steps: input.steps,
          checkpoints: checkpoints.map((c) => c.id),
        },
        hint,
      },
    );
  }
  const id = input.checkpointId;
  if (id === undefined) {
    throw new AppError(
      'INVALID_PARAMS',
      `Say which checkpoint of plan ${plan.id} to roll back to. Its checkpoints:\n${list}`,
      {
        details: { planId: plan.id, checkpoints: checkpoints.map((c) => c.id) },
        hint,
      },
    );
  }
  const checkpoint = checkpoints.find((c) => c.id === id);
  if (checkpoint) return { plan, checkpoint };
  throw await wrongKind(deps, access, id, plan, checkpoints, principal);
}

async function planOfCheckpointOrKind(
  access: PlanAccess,
  checkpointId: string,
  principal: Principal,
  deps: Pick<PlanServiceDeps, 'plans'>,
): Promise<Plan> {
  try {
    return await access.planOfCheckpoint(checkpointId, principal);
  } catch (err) {
    if (!(err instanceof AppError && err.reason === 'NOT_FOUND')) throw err;
    // Not a checkpoint: perhaps the plan's own id (or a prefix of it), given where the checkpoint goes.
    const plan = await access.get(checkpointId, principal).catch(() => undefined);
    if (!plan) throw err;
    const checkpoints = await deps.plans.checkpoints(plan.id);
    throw new AppError(
      'INVALID_PARAMS',
      `${checkpointId} is a plan, not a checkpoint. Roll the plan back with --to <checkpoint> or --steps N; its checkpoints:\n${checkpointLines(checkpoints)}`,
      {
        details: { entity: 'plan', id: plan.id, checkpoints: checkpoints.map((c) => c.id) },
        hint: `agents plan rollback ${plan.id} --steps 1`,
      },
    );
  }
}

/** Why `id` is not one of the plan's checkpoints, naming what it is when it is the plan or one of its decisions. */
async function wrongKind(
  deps: Pick<PlanServiceDeps, 'plans'>,
  access: PlanAccess,
  id: string,
  plan: Plan,
  checkpoints: readonly Checkpoint[],
  principal: Principal,
): Promise<AppError> {
  const list = checkpointLines(checkpoints);
  const details = { planId: plan.id, id, checkpoints: checkpoints.map((c) => c.id) };
  const hint = `agents plan rollback ${plan.id} --to <checkpoint>`;
  if (id === plan.id || (await access.get(id, principal).catch(() => undefined))) {
    return new AppError(
      'INVALID_PARAMS',
      `${id} is a plan, not a checkpoint. The checkpoints of plan ${plan.id}:\n${list}`,
      {
        details: { ...details, entity: 'plan' },
        hint,
      },
    );
  }
  const decision = (await deps.plans.decisions(plan.id)).find((d) => d.id === id);
  if (decision) {
    const after = checkpoints.find((c) => c.decisionId === decision.id);
    return new AppError(
      'INVALID_PARAMS',
      `${id} is a decision, not a checkpoint${after ? `: the checkpoint taken after it is ${after.id}` : ''}. The checkpoints of plan ${plan.id}:\n${list}`,
      { details: { ...details, entity: 'decision', ...(after ? { checkpointId: after.id } : {}) }, hint },
    );
  }
  return new AppError(
    'NOT_FOUND',
    `Checkpoint ${id} is not a checkpoint of plan ${plan.id}. Its checkpoints:\n${list}`,
    {
      details: { ...details, entity: 'checkpoint' },
      hint,
    },
  );
}
