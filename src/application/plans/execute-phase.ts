import { newId } from '../../domain/ids.ts';
import type { Plan, ToolCallRecord } from '../../domain/plan/plan.ts';
import { vetoText } from '../hooks/hook.service.ts';
import { planToolCallHooks } from '../hooks/plan-hooks.ts';
import { policyOf } from '../../domain/plan/plan.ts';
import { awaitAnswer, completePhase, startPhase } from '../../domain/plan/plan-state.ts';
import { decideCall } from '../../domain/plan/policy.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from './plan-recorder.ts';
import {
  callRecorder,
  changedFiles,
  commandSettings,
  diffArtifact,
  keptOutput,
  prepareSandboxes,
  wallClock,
} from './execute-shared.ts';
import { ChangeTracker } from './change-tracker.ts';
import { strategizeWithActor } from './llm/strategize-llm.ts';
import { executeWithActor } from './llm/execute-llm.ts';
import { argSummary, commandOfCall, normalizeArgs, previewOf } from './tool-call-preview.ts';
import { attachTask, countToolCall, moveCursor } from '../../domain/plan/plan-progress.ts';

/**
 * The execute phase (run or resumed): creates the sandboxes, then runs each step's tool call in
 * them — each call decided first by the plan's policy (allow runs it, ask waits for an approval,
 * deny fails the step without running it), checkpointing after each write,
 * stopping as constrained when the budget is spent — and ends with the diff as an artifact.
 */
export async function executeSteps(io: PlanRunPorts, plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
  // A plan from a goal: its execution actor carries out the strategy (llm/execute-llm.ts).
  if (plan.actors) {
    if (plan.phase === 'strategize' && plan.state === 'constrained') {
      // Strategizing again on this task: its end is not the task's (execute follows); a failure is.
      const strategizing: TaskHandle = {
        task: turn.task,
        signal: turn.signal,
        artifact: (a, o) => turn.artifact(a, o),
        stored: () => turn.stored(),
        status: (state, text, extra) =>
          turn.status(state === 'TASK_STATE_COMPLETED' ? 'TASK_STATE_WORKING' : state, text, extra),
      };
      await strategizeWithActor(io, plan, strategizing, turn.signal);
    }
    return executeWithActor(io, plan, turn, yes);
  }
  const resuming = plan.phase === 'execute';
  startPhase(plan, 'execute');
  attachTask(plan, 'execute', turn.task.id);
  await io.recorder.save(plan);
  await turn.status(
    'TASK_STATE_WORKING',
    resuming ? `Resuming execute at step ${plan.cursor + 1}` : 'Executing in a sandbox',
    planMeta(plan),
  );
  const tick = wallClock(plan);
  const atCheckpoint = await prepareSandboxes(io, plan, turn, { restore: resuming });
  const { network, env: actionEnv } = await commandSettings(io, plan);
  const decisions = await io.plans.decisions(plan.id);
  const policy = policyOf(plan);
  const record = callRecorder(io, turn);
  const sandbox = plan.sandboxes[0];
  if (!sandbox)
    return io.recorder.fail(plan, turn, 'execute', { kind: 'internal', message: 'the plan has no sandbox', recoverable: false });
  const hooks = planToolCallHooks(io.hooks, plan, turn);
  const changes = new ChangeTracker(atCheckpoint);
  for (let i = plan.cursor; i < plan.stepsTotal; i++) {
    const d = decisions.find((x) => x.type === 'step' && x.stepIndex === i && !x.superseded);
    if (!d)
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'strategy',
        message: `no decision for step ${i + 1}`,
        recoverable: true,
        hint: `re-strategize with agents plan correct`,
      });
    if (typeof d.chosen === 'string')
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'strategy',
        message: `step ${i + 1} decides no tool call`,
        recoverable: true,
        hint: `re-strategize with agents plan correct`,
      });
    const { tool: toolName, args } = d.chosen;
    const tool = (await io.registry.use('tool', toolName))?.definition;
    if (!tool)
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'tool',
        message: `tool ${toolName} no longer exists`,
        recoverable: true,
      });
    tick();
    if (plan.usage.toolCalls >= plan.budget.maxToolCalls) {
      return io.recorder.fail(
        plan,
        turn,
        'execute',
        {
          kind: 'budget',
          message: `budget exceeded: ${plan.usage.toolCalls} of ${plan.budget.maxToolCalls} tool calls used`,
          recoverable: true,
          hint: 'raise it with agents plan execute --max-tool-calls N',
        },
        'constrained',
      );
    }
    if (plan.usage.wallMs >= plan.budget.maxWallMs) {
      return io.recorder.fail(
        plan,
        turn,
        'execute',
        {
          kind: 'budget',
          message: `budget exceeded: ${Math.round(plan.usage.wallMs / 1000)} s of ${Math.round(plan.budget.maxWallMs / 1000)} s wall time used`,
          recoverable: true,
          hint: 'raise it with agents plan execute --max-wall-seconds N',
        },
        'constrained',
      );
    }
    let normalized: Record<string, unknown> | undefined;
    try {
      normalized = normalizeArgs(toolName, args);
    } catch {
      normalized = undefined; // refused again below, where the call would run
    }
    const verdict = decideCall(policy, {
      tool: toolName,
      writes: tool.writes,
      command: normalized && commandOfCall(tool, normalized),
    });
    // A call that did not run, in the execution log.
    const notRun = (summary: string): Promise<void> =>
      record({
        id: newId(),
        planId: plan.id,
        decisionId: d.id,
        tool: toolName,
        args,
        ok: false,
        summary,
        durationMs: 0,
        filesTouched: [],
        exitCode: null,
        resource: sandbox.resource,
        createdAt: io.recorder.now().toISOString(),
        policy: verdict,
      });
    if (verdict.decision === 'deny') {
      await notRun(`denied by policy: ${verdict.reason}`);
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'policy',
        message: `step ${i + 1} (${toolName}) was not run: ${verdict.reason}`,
        recoverable: true,
        hint: `correct the step (agents plan correct ${d.id} …), or make a new plan under another automation profile (agents plan use … --automation-profile NAME)`,
      });
    }
    // An answer recorded for this step in this attempt (answer() records it before resuming).
    const answered = decisions
      .filter((x) => x.type === 'approval' && x.parentId === d.id && x.attempt === plan.attempt)
      .at(-1);
    if (verdict.decision === 'ask' && !yes && !answered) {
      const request = {
        kind: 'tool-call',
        planId: plan.id,
        decisionId: d.id,
        step: i + 1,
        of: plan.stepsTotal,
        tool: toolName,
        args,
        preview: previewOf(toolName, args),
        policy: verdict,
        options: ['approve', 'reject', 'reject-with-guidance'],
      };
      awaitAnswer(plan, { kind: 'tool-approval', taskId: turn.task.id, decisionId: d.id, request });
      await io.recorder.save(plan);
      return turn.status(
        'TASK_STATE_INPUT_REQUIRED',
        `Approve step ${i + 1}/${plan.stepsTotal}: ${toolName} ${argSummary(args)}? (approve / reject / reject with guidance)`,
        { data: { approvalRequest: request }, ...planMeta(plan) },
      );
    }
    if (answered?.chosen === 'reject') {
      moveCursor(plan, i + 1);
      await io.recorder.save(plan);
      await turn.status('TASK_STATE_WORKING', `Step ${i + 1}/${plan.stepsTotal} skipped: rejected`, planMeta(plan));
      continue;
    }
    await turn.status(
      'TASK_STATE_WORKING',
      `Step ${i + 1}/${plan.stepsTotal}: ${toolName} ${argSummary(args)}`,
      planMeta(plan, { step: i + 1 }),
    );
    const veto = await hooks?.before(toolName, args);
    if (veto) {
      await notRun(vetoText(veto));
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'policy',
        message: `step ${i + 1} (${toolName}) was not run: ${vetoText(veto)}`,
        recoverable: true,
        hint: `see the hook's output with agents task show ${turn.task.id}; correct the step (agents plan correct ${d.id} …) or run agents plan execute ${plan.id} once the hook allows it`,
      });
    }
    const t0 = Date.now();
    const remaining = Math.max(1000, plan.budget.maxWallMs - plan.usage.wallMs);
    const result = await io.tools.run({
      tool,
      args: normalized ?? normalizeArgs(toolName, args),
      sandbox,
      signal: turn.signal,
      timeoutMs: Math.min(io.commandTimeoutMs ?? 300_000, remaining),
      network,
      env: actionEnv,
    });
    countToolCall(plan);
    changes.ran(tool, result, hooks?.ran ?? 0);
    tick();
    const output = keptOutput(result);
    const call: ToolCallRecord = {
      id: newId(),
      planId: plan.id,
      decisionId: d.id,
      tool: toolName,
      args,
      ok: result.ok && !turn.signal.aborted,
      summary: turn.signal.aborted ? 'cancelled' : result.summary,
      durationMs: Date.now() - t0,
      filesTouched: result.filesTouched,
      exitCode: result.exitCode ?? null,
      resource: sandbox.resource,
      network,
      ...(result.confinement ? { confinement: result.confinement } : {}),
      ...(output ? { output } : {}),
      createdAt: io.recorder.now().toISOString(),
      policy: verdict,
    };
    if (turn.signal.aborted) {
      await io.plans.putToolCall(call);
      return;
    }
    if (result.ok && tool.writes) {
      const known = changes.since();
      const cp = await io.recorder.checkpoint(plan, `after-step:${i + 1}`, i + 1, d.id, known && { [sandbox.resource]: known });
      changes.checkpointed();
      call.checkpointId = cp.id;
    }
    await record(call);
    await hooks?.after(toolName, args, result);
    changes.hooks(hooks?.ran ?? 0);
    if (!result.ok) {
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'tool',
        message: `step ${i + 1} (${toolName}) failed: ${result.summary}`,
        recoverable: true,
        hint: `correct the plan (agents plan correct ${d.id} …) or fix the cause and run agents plan execute ${plan.id} to resume`,
      });
    }
    moveCursor(plan, i + 1);
    await io.recorder.save(plan);
    await turn.status(
      'TASK_STATE_WORKING',
      `  ✓ ${result.summary} (${call.durationMs} ms)${call.checkpointId ? `, checkpoint ${call.checkpointId}` : ''}`,
      planMeta(plan, { step: i + 1, toolCall: call.id, checkpoint: call.checkpointId }),
    );
  }
  await io.recorder.checkpoint(plan, 'before-apply', plan.stepsTotal);
  const stats = await diffArtifact(io, plan, turn);
  completePhase(plan);
  tick();
  await io.recorder.save(plan);
  await turn.status(
    'TASK_STATE_COMPLETED',
    `Executed ${plan.stepsTotal} step${plan.stepsTotal === 1 ? '' : 's'}: ${changedFiles(stats)}. Next: agents plan diff ${plan.id}, then agents plan apply ${plan.id}`,
    planMeta(plan),
  );
}
