import type { Logger } from '../ports/logger.port.ts';
import type { RunnerRegistry } from '../ports/runner.port.ts';
import type { PlanService } from '../plans/plan.service.ts';
import type { StrandedTasks } from './stranded-tasks.service.ts';

export interface StrandedWorkReport {
  tasks: string[];
  plans: string[];
}

/** The status message of a turn that a stopped process left running. */
const RESTARTED_TEXT =
  'Interrupted: the server restarted (or the agent process running this task stopped) before this task finished; send the message again (with a new messageId) to retry';

/**
 * Settles what no live process owns (issue #8, defect 7): turns still submitted or working whose
 * runner is gone end FAILED, saying the server restarted; plans left processing become errored
 * (interrupted) and resumable. Run at start, before serving, and from time to time after.
 * `treatSelfAsGone` is for a process that is stopping and has ended its own turns.
 */
export async function settleStrandedWork(
  deps: { tasks: StrandedTasks; plans: PlanService; runners: RunnerRegistry; logger: Logger },
  opts: { text?: string; treatSelfAsGone?: boolean } = {},
): Promise<StrandedWorkReport> {
  const isLive = (runnerId: string | null): Promise<boolean> =>
    opts.treatSelfAsGone && runnerId === deps.runners.self ? Promise.resolve(false) : deps.runners.isLive(runnerId);
  const tasks = await deps.tasks.settle(isLive, opts.text ?? RESTARTED_TEXT);
  const plans = await deps.plans.settleInterrupted((taskId) => deps.tasks.isStranded(taskId, isLive));
  if (tasks.length + plans.length > 0) deps.logger.warn({ tasks, plans }, 'settled work that no live process owned');
  return { tasks, plans };
}
