import type { CliCommand } from '../cli-command.ts';
import type { Runner } from '../runner.ts';
import { registerPlanHousekeeping } from './plan-housekeeping.command.ts';
import { registerPlanApply, registerPlanExecute, registerPlanUse } from './plan-lifecycle.command.ts';
import {
  registerPlanApprove,
  registerPlanCancel,
  registerPlanCorrect,
  registerPlanPrompt,
  registerPlanReject,
  registerPlanRollback,
} from './plan-steer.command.ts';
import {
  registerPlanArtifacts,
  registerPlanDiff,
  registerPlanExplain,
  registerPlanList,
  registerPlanStatus,
  registerPlanTree,
} from './plan-view.command.ts';

/** `agents plan …`: strategize → execute in a sandbox → apply, with live progress and approvals. */
export function registerPlan(program: CliCommand, runner: Runner): void {
  const plan = program
    .command('plan')
    .description('Plans: an action applied to projects — strategize, execute in a sandbox, apply');
  // One call per command, in the order `agents plan --help` lists them.
  registerPlanUse(plan, runner);
  registerPlanExecute(plan, runner);
  registerPlanApply(plan, runner);
  registerPlanApprove(plan, runner);
  registerPlanReject(plan, runner);
  registerPlanPrompt(plan, runner);
  registerPlanCancel(plan, runner);
  registerPlanStatus(plan, runner);
  registerPlanTree(plan, runner);
  registerPlanExplain(plan, runner);
  registerPlanCorrect(plan, runner);
  registerPlanDiff(plan, runner);
  registerPlanArtifacts(plan, runner);
  registerPlanRollback(plan, runner);
  registerPlanList(plan, runner);
  registerPlanHousekeeping(plan, runner);
}
