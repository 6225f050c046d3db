/**
 * The execute phase's two reads of what is recorded: the verify command (run in the sandbox, its
 * changes not kept in the plan's work) and the answer an approval recorded for a waiting call.
 */
import type { Decision, Plan } from '../../../domain/plan/plan.ts';
import { BUILTIN_TOOLS } from '../../../domain/registry/builtins.ts';
import type { ToolDefinition } from '../../../domain/registry/tool.definition.ts';
import { ProviderFailure } from '../../ports/language-model.port.ts';
import type { ToolCallResult } from '../../ports/sandbox.port.ts';
import type { Transcript } from '../../ports/transcript.port.ts';
import type { CallAnswer } from '../../agent/agent.types.ts';
import { callRecorder } from '../execute-shared.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from '../plan.recorder.ts';
import { normalizeArgs } from '../tool-call-preview.ts';
import { runPlanTool, type PlanCallRecorder, type PlanToolRun } from './plan-agent.ts';
import { messageOf } from '../../../domain/errors.ts';

const RUN_COMMAND = BUILTIN_TOOLS.find((t) => t.name === 'builtin/run-command') as ToolDefinition;

/** Runs the plan's verify command in the sandbox; what it changed is not kept in the plan's work. */
export async function runVerify(
  c: {
    io: PlanRunPorts;
    plan: Plan;
    turn: TaskHandle;
    rootId: string;
    recorder: PlanCallRecorder;
    tick: () => void;
    run: PlanToolRun;
  },
  v: NonNullable<Plan['verify']>,
): Promise<NonNullable<Plan['done']>['verify']> {
  const { plan, io, turn } = c;
  const signal = turn.signal;
  await turn.status('TASK_STATE_WORKING', `Verifying: ${v.command}`, planMeta(plan));
  const before = await io.recorder.checkpoint(plan, 'before-verify', plan.cursor, c.rootId);
  const args = { command: v.command };
  const t0 = Date.now();
  let result: ToolCallResult;
  try {
    const timeoutMs = v.timeoutSeconds !== undefined ? v.timeoutSeconds * 1000 : c.run.timeoutMs();
    result = await runPlanTool(
      { ...c.run, timeoutMs: () => Math.min(timeoutMs, Math.max(1000, plan.budget.maxWallMs - plan.usage.wallMs)) },
      RUN_COMMAND,
      normalizeArgs(RUN_COMMAND.name, args),
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw err;
    result = { ok: false, summary: `cannot run it: ${messageOf(err)}`, output: '', filesTouched: [] };
  }
  c.tick();
  const rec = c.recorder.callRecord(RUN_COMMAND.name, { ...args, verify: true }, result, Date.now() - t0, undefined);
  if (signal.aborted) {
    await io.plans.putToolCall(rec);
    throw new ProviderFailure('cancelled', 'cancelled', '');
  }
  await callRecorder(io, turn)(rec);
  if (result.filesTouched.length) await io.recorder.restore(plan, before);
  const exitCode = result.exitCode ?? null;
  const ok = result.ok && exitCode === 0;
  await turn.status(
    'TASK_STATE_WORKING',
    `  ${ok ? '✓' : '✗'} verify: ${result.summary} (${rec.durationMs} ms)`,
    planMeta(plan, { toolCall: rec.id }),
  );
  return { command: v.command, exitCode, ok, summary: result.summary };
}

/** The answer `answer` recorded for the call the transcript waits on (undefined: none; it is asked again). */
export function answerFor(
  decisions: readonly Decision[],
  rootId: string,
  attempt: number,
  t: Transcript,
): CallAnswer | undefined {
  const call = t.pending?.calls[t.pending.next];
  if (!call) return undefined;
  const d = decisions
    .filter(
      (x) =>
        x.type === 'approval' &&
        x.parentId === rootId &&
        x.attempt === attempt &&
        (x.context['request'] as { callId?: unknown } | undefined)?.callId === call.id,
    )
    .at(-1);
  if (!d || (d.chosen !== 'approve' && d.chosen !== 'reject')) return undefined;
  const guidance = d.context['guidance'];
  const always = d.context['always'];
  return {
    callId: call.id,
    answer: {
      decision: d.chosen,
      ...(typeof guidance === 'string' ? { guidance } : {}),
      ...(always === 'tool' || always === 'command' ? { always } : {}),
    },
  };
}
