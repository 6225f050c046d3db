import { failPhase } from '../../domain/plan/plan-state.ts';
import type { PlanServiceDeps } from './plan.types.ts';
import { touch } from '../../domain/plan/plan-progress.ts';

/** How long a processing plan whose phase task is not stored is taken to be starting up elsewhere. */
export const MISSING_TASK_GRACE_MS = 60_000;

/**
 * Plans left `processing` by a process that stopped (issue #8, defect 7): a plan no run of this
 * process holds, whose current phase's task is stranded (`isStranded`: no live process runs it,
 * or it is gone), becomes errored with an `interrupted` error saying how to resume. Works on the
 * stored plan only, whatever started the phase. Returns the ids of the plans settled.
 */
export async function settleInterruptedPlans(
  deps: Pick<PlanServiceDeps, 'plans' | 'engine'> & { now: () => Date },
  isStranded: (taskId: string) => Promise<boolean | 'missing'>,
  graceMs = MISSING_TASK_GRACE_MS,
): Promise<string[]> {
  const settled: string[] = [];
  for (const stored of await deps.plans.listByState('processing')) {
    // A plan waiting for the user's answer waits for no process.
    if (deps.engine.running.has(stored.id) || stored.waiting) continue;
    const taskId = stored.tasks[stored.phase];
    const stranded = taskId ? await isStranded(taskId) : 'missing';
    if (stranded === false) continue;
    // A phase whose task is not stored (yet): another process may be starting it right now
    // (local mode runs one agent per CLI call over one database). Only an old one is stranded.
    if (stranded === 'missing' && deps.now().getTime() - Date.parse(stored.updatedAt) < graceMs) continue;
    const plan = (await deps.plans.get(stored.id)) ?? stored;
    if (plan.state !== 'processing' || deps.engine.running.has(plan.id)) continue;
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
      // Which process stopped is not known here: a server, or a local command's own agent (Ctrl-C).
      message: `the ${plan.phase} phase was interrupted: the agent process running it stopped (a server restart, or Ctrl-C on a local command)`,
      ...resume[plan.phase],
    });
    touch(plan, deps.now());
    await deps.plans.save(plan);
    settled.push(plan.id);
  }
  return settled;
}
