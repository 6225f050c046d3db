/**
 * A plan's side of the agent loop: its tools as the loop's tools (run by the ToolRunner in the
 * sandbox, or — strategizing — read-only in the project's directory), and the execute phase's
 * recorder: every call, run or not, is a ToolCallRecord of the plan with a status line on its task;
 * a call that wrote is checkpointed; a command's output streams into a `command-output` artifact.
 */
import { newId } from '../../../domain/ids.ts';
import type { Plan, ToolCallRecord } from '../../../domain/plan/plan.ts';
import type { PolicyVerdict } from '../../../domain/plan/policy.ts';
import type { ToolDefinition } from '../../../domain/registry/tool.definition.ts';
import type { CommandOutputChunk, SandboxInfo, ToolCallResult } from '../../ports/sandbox.port.ts';
import { OutputStream } from '../../agent/output-stream.ts';
import type { AgentRecorder, AgentTool, CallEvent, NotRunState, ToolOutcome } from '../../agent/agent.types.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from '../plan.recorder.ts';
import { callRecorder, keptOutput } from '../execute-shared.ts';
import { argSummary, commandOfCall, normalizeArgs } from '../tool-call-preview.ts';
import type { PlanTool } from './plan-model.ts';
import { countToolCall, countWrite } from '../../../domain/plan/plan-progress.ts';
import { messageOf } from '../../../domain/errors.ts';

/** How a plan runs a tool: where, with which network and variables, for how long. */
export interface PlanToolRun {
  io: PlanRunPorts;
  sandbox: SandboxInfo;
  network: 'none' | 'allow';
  env?: Readonly<Record<string, string>> | undefined;
  /** The time limit of one call (ms), given the budget's rest. */
  timeoutMs(): number;
}

/** A plan's tool as the loop's tool. */
export function planAgentTool(t: PlanTool, r: PlanToolRun): AgentTool {
  const { def } = t;
  const { io, sandbox, network, env } = r;
  return {
    ref: t.ref,
    modelName: t.modelName,
    description: def.description ?? t.ref,
    inputSchema: def.inputSchema,
    readOnly: def.readOnly,
    writes: def.writes,
    normalize: (args) => normalizeArgs(t.ref, args),
    commandOf: (args) => commandOfCall(def, args),
    preview: async (args, signal) =>
      (await io.tools.preview?.({ tool: def, args, sandbox, signal, network, env })) ?? {},
    run: (args, { signal, onOutput }) => runPlanTool(r, def, args, signal, onOutput),
  };
}

/** Runs one tool in the plan's sandbox; a runner that throws is a failed call, not a failed phase. */
export async function runPlanTool(
  r: PlanToolRun,
  def: ToolDefinition,
  args: Record<string, unknown>,
  signal: AbortSignal,
  onOutput?: (chunk: CommandOutputChunk) => void,
): Promise<ToolCallResult> {
  try {
    return await r.io.tools.run({
      tool: def,
      args,
      sandbox: r.sandbox,
      signal,
      timeoutMs: r.timeoutMs(),
      network: r.network,
      env: r.env,
      onOutput,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    return { ok: false, summary: `${def.name} failed: ${messageOf(err)}`, output: '', filesTouched: [] };
  }
}

interface RunningCall {
  step: number;
  output: OutputStream;
}

/** The execute phase's recorder (see the module's comment). */
export class PlanCallRecorder implements AgentRecorder {
  private readonly record: (call: ToolCallRecord) => Promise<void>;

  private readonly io: PlanRunPorts;
  private readonly plan: Plan;
  private readonly turn: TaskHandle;
  private readonly at: { decisionId: () => string; sandbox: SandboxInfo; network: 'none' | 'allow'; tick: () => void };

  constructor(
    io: PlanRunPorts,
    plan: Plan,
    turn: TaskHandle,
    at: { decisionId: () => string; sandbox: SandboxInfo; network: 'none' | 'allow'; tick: () => void },
  ) {
    this.io = io;
    this.plan = plan;
    this.turn = turn;
    this.at = at;
    this.record = callRecorder(io, turn);
  }

  async notRun(
    e: CallEvent & { state: NotRunState; summary: string; told?: string | undefined; hook?: string | undefined },
  ): Promise<void> {
    const summary =
      e.state === 'invalid'
        ? `not run: ${e.told ?? e.summary}`
        : e.state === 'denied'
          ? `denied by policy: ${e.summary}`
          : e.state === 'declined'
            ? e.summary.replace(/^declined/, 'rejected')
            : e.summary;
    const args =
      e.args !== null && typeof e.args === 'object' ? (e.args as Record<string, unknown>) : { arguments: e.args };
    await this.record(
      this.callRecord(e.ref, args, { ok: false, summary, output: '', filesTouched: [], exitCode: null }, 0, e.verdict),
    );
    if (e.state === 'declined')
      await this.turn.status(
        'TASK_STATE_WORKING',
        `  ✗ ${e.ref} ${summary.replace(/^rejected by the user/, 'rejected')}`,
        planMeta(this.plan),
      );
  }

  async started(e: CallEvent & { tool: AgentTool }): Promise<RunningCall> {
    const step = this.plan.usage.toolCalls + 1;
    await this.turn.status(
      'TASK_STATE_WORKING',
      `Step ${step}: ${e.ref} ${argSummary(e.args as Record<string, unknown>)}`,
      planMeta(this.plan, { step }),
    );
    const output = new OutputStream((a, o) => this.turn.artifact(a, o), {
      artifactId: `command-output-${this.plan.attempt}-${step}`,
      name: 'command-output',
      metadata: { kind: 'command-output', step, tool: e.ref },
    });
    return { step, output };
  }

  output(handle: unknown, chunk: CommandOutputChunk): void {
    (handle as RunningCall).output.push(chunk);
  }

  async finished(
    e: CallEvent & { tool: AgentTool; outcome: ToolOutcome; durationMs: number },
    handle: unknown,
  ): Promise<void> {
    const { plan, io } = this;
    const h = handle as RunningCall;
    await h.output.close();
    countToolCall(plan);
    this.at.tick();
    const o = e.outcome;
    const result: ToolCallResult = {
      ok: o.ok,
      summary: o.summary,
      output: o.output,
      filesTouched: o.filesTouched ?? [],
      exitCode: o.exitCode ?? null,
      confinement: o.confinement,
      commandOutput: o.commandOutput,
    };
    const rec = this.callRecord(e.ref, e.args as Record<string, unknown>, result, e.durationMs, e.verdict);
    if (this.turn.signal.aborted) {
      await io.plans.putToolCall(rec);
      return;
    }
    if (o.ok && e.tool.writes) {
      const cursor = countWrite(plan);
      const cp = await io.recorder.checkpoint(plan, `after-call:${cursor}`, cursor, this.at.decisionId());
      rec.checkpointId = cp.id;
    }
    await this.record(rec);
    await io.recorder.save(plan);
    await this.turn.status(
      'TASK_STATE_WORKING',
      `  ${o.ok ? '✓' : '✗'} ${o.summary} (${rec.durationMs} ms)${rec.checkpointId ? `, checkpoint ${rec.checkpointId}` : ''}`,
      planMeta(plan, { step: h.step, toolCall: rec.id, checkpoint: rec.checkpointId }),
    );
  }

  /** A record of one call of the plan (also the verify command's). */
  callRecord(
    ref: string,
    args: Record<string, unknown>,
    result: ToolCallResult,
    durationMs: number,
    verdict: PolicyVerdict | undefined,
  ): ToolCallRecord {
    const aborted = this.turn.signal.aborted;
    const output = keptOutput(result);
    return {
      id: newId(),
      planId: this.plan.id,
      decisionId: this.at.decisionId(),
      tool: ref,
      args,
      ok: result.ok && !aborted,
      summary: aborted ? 'cancelled' : result.summary,
      durationMs,
      filesTouched: result.filesTouched,
      exitCode: result.exitCode ?? null,
      resource: this.at.sandbox.resource,
      network: this.at.network,
      ...(result.confinement ? { confinement: result.confinement } : {}),
      ...(output ? { output } : {}),
      createdAt: this.io.recorder.now().toISOString(),
      ...(verdict ? { policy: verdict } : {}),
    };
  }
}
