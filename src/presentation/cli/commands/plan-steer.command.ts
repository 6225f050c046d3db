import { type Command, Option } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  planApprove,
  planCancel,
  planCorrect,
  planPrompt,
  planReject,
  planRollback,
  planStatus,
} from '../../../protocol/client/index.ts';
import { phaseState } from '../render/plan.render.ts';
import { renderCorrection } from '../render/plan-decision.render.ts';
import { UsageError } from '../exit-codes.ts';
import { renderFields } from '../render/table.ts';
import type { Runner } from '../runner.ts';
import { choiceOption, intOption } from '../support/options.ts';
import { renderRunSummary, runOutcome, runPhase, PHASE_CALLS, type PhaseRun } from '../support/plan-run.ts';
import { PLAN_REF_CALLS, PLAN_REF_HELP, planRef } from '../support/refs.ts';

/** `agents plan approve`: approve what the plan waits for, and follow it on. */
export function registerPlanApprove(plan: CliCommand, runner: Runner): void {
  plan
    .command('approve')
    .description('Approve what the plan waits for (a tool call, or the apply), and follow it on')
    .argument('<id>', PLAN_REF_HELP)
    .option('--yes', 'approve whatever else the run asks')
    .option(
      '--always [what]',
      'also approve the later tool calls of this run with the same command (command, the default) or of the same tool (tool)',
      choiceOption(['command', 'tool']),
    )
    .calls(planApprove, ...PHASE_CALLS, ...PLAN_REF_CALLS)
    .action((id: string, opts: { yes?: boolean; always?: string | boolean }, cmd: Command) =>
      runner.run(cmd, 'plan approve', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const always = opts.always === true ? 'command' : (opts.always as 'command' | 'tool' | undefined);
        const run = await runPhase(
          ctx,
          client,
          () =>
            client.call(planApprove, { planId, wait: false, ...(always ? { always } : {}) }, { signal: ctx.signal }),
          { yes: opts.yes === true },
        );
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        return runOutcome(run);
      }),
    );
}

/** `agents plan reject`: reject what the plan waits for, with guidance. */
export function registerPlanReject(plan: CliCommand, runner: Runner): void {
  plan
    .command('reject')
    .description(
      'Reject what the plan waits for: a rejected tool call is skipped, a rejected apply leaves the plan ready to apply',
    )
    .argument('<id>', PLAN_REF_HELP)
    .option('--guidance <text>', 'what to do instead (kept with the decision)')
    .option('--yes', 'approve whatever else the run asks')
    .calls(planReject, ...PHASE_CALLS, ...PLAN_REF_CALLS)
    .action((id: string, opts: { guidance?: string; yes?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan reject', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const params = { planId, wait: false, ...(opts.guidance?.trim() ? { guidance: opts.guidance } : {}) };
        // What is rejected decides what success looks like: a declined apply ends its task canceled.
        const asked = (await client.call(planStatus, { planId }, { signal: ctx.signal })).waiting?.kind;
        const run = await runPhase(ctx, client, () => client.call(planReject, params, { signal: ctx.signal }), {
          yes: opts.yes === true,
        });
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        // The task's own line said so ("Apply declined …; the plan stays ready to apply"), and the summary what next.
        if (asked === 'apply-approval' && applyDeclined(run))
          return runOutcome({ follow: run.follow, status: run.status, taskId: run.taskId });
        return runOutcome(run);
      }),
    );
}

/**
 * The rejected apply did what was asked: its task ended canceled (as a declined apply does), no
 * plan error came of it, and the plan waits for nothing, ready to apply later.
 */
function applyDeclined(run: PhaseRun): boolean {
  return (
    run.follow.task?.status.state === 'TASK_STATE_CANCELED' &&
    run.follow.planError === undefined &&
    run.status.waiting === undefined &&
    run.status.allowed.includes('apply')
  );
}

/** `agents plan prompt`: guidance to an errored or waiting plan, and follow it on. */
export function registerPlanPrompt(plan: CliCommand, runner: Runner): void {
  plan
    .command('prompt')
    .description(
      'Give guidance to a plan that errored, and follow it on; on a waiting approval a clear yes approves, any other text rejects with it as guidance',
    )
    .argument('<id>', PLAN_REF_HELP)
    .argument('<guidance...>', 'what to tell it')
    .option('--yes', 'approve whatever else the run asks')
    .calls(planPrompt, ...PHASE_CALLS, ...PLAN_REF_CALLS)
    .action((id: string, words: string[], opts: { yes?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan prompt', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        // Guidance on a waiting apply declines it, as plan reject does: a success, not a failed task.
        const asked = (await client.call(planStatus, { planId }, { signal: ctx.signal })).waiting?.kind;
        const run = await runPhase(
          ctx,
          client,
          () => client.call(planPrompt, { planId, guidance: words.join(' ') }, { signal: ctx.signal }),
          { yes: opts.yes === true },
        );
        ctx.ui.out(renderRunSummary(run.status, run.follow.task, ctx.ui));
        if (asked === 'apply-approval' && applyDeclined(run))
          return runOutcome({ follow: run.follow, status: run.status, taskId: run.taskId });
        return runOutcome(run);
      }),
    );
}

/** `agents plan cancel`: stop a plan, keeping or removing its sandboxes. */
export function registerPlanCancel(plan: CliCommand, runner: Runner): void {
  plan
    .command('cancel')
    .description('Stop a plan (a running command is killed); its sandbox stays for inspection unless --clean')
    .argument('<id>', PLAN_REF_HELP)
    .option('--reason <text>', 'why (kept with the plan)')
    .option('--clean', "also remove the plan's sandboxes and branches (the plan's record stays)")
    .calls(planCancel, ...PLAN_REF_CALLS)
    .action((id: string, opts: { reason?: string; clean?: boolean }, cmd: Command) =>
      runner.run(cmd, 'plan cancel', async (ctx) => {
        const client = await ctx.client();
        const planId = await planRef(ctx, client, id);
        const s = await client.call(
          planCancel,
          { planId, ...(opts.reason ? { reason: opts.reason } : {}), ...(opts.clean ? { clean: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const sandboxes = s.sandboxes;
        if (ui.rich) {
          ui.out(`Cancelled plan ${s.planId} ${phaseState(s, ui.pal)}\n`);
          for (const b of sandboxes) ui.out(ui.pal.dim(`  sandbox kept for inspection: ${b.root}\n`));
          if (opts.clean) ui.out(ui.pal.dim('  sandboxes and branches removed\n'));
        } else if (opts.clean)
          ui.out(
            renderFields(
              [
                ['plan', s.planId],
                ['phase', s.phase],
                ['state', s.state],
                ['sandboxes', 'removed'],
              ],
              ui.mode,
            ),
          );
        else
          ui.out(
            renderFields(
              [
                ['plan', s.planId],
                ['phase', s.phase],
                ['state', s.state],
                ...sandboxes.map((b) => ['sandbox', b.root] as const),
              ],
              ui.mode,
            ),
          );
        return { data: s };
      }),
    );
}

/** `agents plan correct`: revert a decision or append guidance to it. */
export function registerPlanCorrect(plan: CliCommand, runner: Runner): void {
  plan
    .command('correct')
    .description(
      'Correct a decision: revert (supersede it and what follows, roll back, re-strategize) or append guidance',
    )
    .argument('<decision-id>', 'the decision (from agents plan tree)')
    .addOption(new Option('--mode <mode>', 'revert or append').choices(['revert', 'append']).makeOptionMandatory())
    .requiredOption('--guidance <text>', 'what to do differently')
    .option('--dry-run', 'only report what would be invalidated')
    .option('--plan <id>', 'the plan it belongs to (faster)')
    .calls(planCorrect)
    .action(
      (
        decisionId: string,
        opts: { mode: 'revert' | 'append'; guidance: string; dryRun?: boolean; plan?: string },
        cmd: Command,
      ) =>
        runner.run(cmd, 'plan correct', async (ctx) => {
          const client = await ctx.client();
          const r = await client.call(
            planCorrect,
            {
              decisionId,
              mode: opts.mode,
              guidance: opts.guidance,
              ...(opts.dryRun ? { dryRun: true } : {}),
              ...(opts.plan ? { planId: opts.plan } : {}),
            },
            { signal: ctx.signal },
          );
          ctx.ui.out(renderCorrection(r, ctx.ui));
          return { data: r };
        }),
    );
}

/** A checkpoint id is a whole ULID; anything shorter is a plan (a prefix, or `last`). */
const WHOLE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** `agents plan rollback`: restore the sandbox to a checkpoint, named or a number of steps back. */
export function registerPlanRollback(plan: CliCommand, runner: Runner): void {
  plan
    .command('rollback')
    .description(
      'Restore the sandbox to a checkpoint (from agents plan status), or N steps back; execute then resumes from there',
    )
    .argument('<id>', 'a plan (with --to or --steps), or a checkpoint')
    .option('--to <checkpoint>', "the plan's checkpoint to go back to")
    .option(
      '--steps <n>',
      'go back this many steps (to the newest checkpoint at or before that step)',
      intOption(1, 10_000),
    )
    .option('--plan <id>', 'with a checkpoint id: the plan it belongs to (faster)')
    .calls(planRollback, ...PLAN_REF_CALLS)
    .addHelpText(
      'after',
      '\nExamples:\n  agents plan rollback <plan-id> --steps 1\n  agents plan rollback <plan-id> --to <checkpoint-id>\n  agents plan rollback <checkpoint-id>',
    )
    .action((id: string, opts: { to?: string; steps?: number; plan?: string }, cmd: Command) =>
      runner.run(cmd, 'plan rollback', async (ctx) => {
        if (opts.to !== undefined && opts.steps !== undefined)
          throw new UsageError('give --to <checkpoint> or --steps <n>, not both');
        const client = await ctx.client();
        // `<plan> --to/--steps`; else a checkpoint (a plan given alone is named as such by the server).
        const params =
          opts.to !== undefined || opts.steps !== undefined || !WHOLE_ID.test(id)
            ? {
                planId: await planRef(ctx, client, id),
                ...(opts.to !== undefined ? { checkpointId: opts.to } : {}),
                ...(opts.steps !== undefined ? { steps: opts.steps } : {}),
              }
            : { checkpointId: id, ...(opts.plan ? { planId: opts.plan } : {}) };
        const s = await client.call(planRollback, params, { signal: ctx.signal });
        // With --steps the server chose it: the newest checkpoint at the step the plan is now at.
        const checkpointId =
          params.checkpointId ?? s.checkpoints.filter((c) => c.stepIndex === s.progress.stepsDone).at(-1)?.id ?? '';
        const { ui } = ctx;
        if (ui.rich)
          ui.out(
            `Rolled back plan ${s.planId} to checkpoint ${checkpointId} ${phaseState(s, ui.pal)}\n  ${ui.pal.dim(`resume with: agents plan execute ${s.planId} (at step ${s.progress.stepsDone + 1}/${s.progress.stepsTotal})`)}\n`,
          );
        else
          ui.out(
            renderFields(
              [
                ['plan', s.planId],
                ['checkpoint', checkpointId],
                ['phase', s.phase],
                ['state', s.state],
                ['steps', `${s.progress.stepsDone}/${s.progress.stepsTotal}`],
              ],
              ui.mode,
            ),
          );
        return { data: s };
      }),
    );
}
