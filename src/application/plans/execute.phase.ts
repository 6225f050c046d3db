import { newId } from '../../domain/ids.ts';
import type { Decision, Plan, ToolCallRecord } from '../../domain/plan/plan.ts';
import { policyOf } from '../../domain/plan/plan.ts';
import { awaitAnswer, completePhase, startPhase } from '../../domain/plan/plan-state.ts';
import { attachTask, countToolCall, moveCursor } from '../../domain/plan/plan-progress.ts';
import { decideCall, type PolicyVerdict } from '../../domain/plan/policy.ts';
import type { ToolDefinition } from '../../domain/registry/tool.definition.ts';
import { vetoText } from '../hooks/hook.service.ts';
import { planToolCallHooks } from '../hooks/plan-hooks.ts';
import type { ToolCallHooks } from '../hooks/tool-call-hooks.ts';
import type { SandboxInfo, ToolCallResult } from '../ports/sandbox.port.ts';
import { ChangeTracker } from './change-tracker.ts';
import {
  callRecorder,
  changedFiles,
  commandSettings,
  diffArtifact,
  keptOutput,
  prepareSandboxes,
  wallClock,
} from './execute-shared.ts';
import { executeWithActor } from './llm/execute-llm.phase.ts';
import { strategizeWithActor } from './llm/strategize-llm.phase.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from './plan.recorder.ts';
import { argSummary, commandOfCall, normalizeArgs, previewOf } from './tool-call-preview.ts';

/**
 * The execute phase (run or resumed). A plan from a goal: its execution actor carries out the
 * strategy (llm/execute-llm.phase.ts), strategizing first when a budget stopped its strategy actor. A
 * stepped action: StepRun.
 */
export async function executeSteps(io: PlanRunPorts, plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
  if (!plan.actors) return new StepRun(io, plan, turn, yes).run();
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

/** What the execute phase of a stepped action uses. */
export type StepInputs = Pick<
  PlanRunPorts,
  'recorder' | 'plans' | 'registry' | 'sandboxes' | 'tools' | 'hooks' | 'commandTimeoutMs'
>;

/** One step's decided call: its decision, the tool's name, definition and arguments. */
interface StepCall {
  index: number;
  d: Decision;
  toolName: string;
  tool: ToolDefinition;
  args: Record<string, unknown>;
  /** The arguments as the tool takes them (undefined: refused again where the call would run). */
  normalized: Record<string, unknown> | undefined;
  verdict: PolicyVerdict;
}

/** How the run goes on after a step: to the next one, or it stops here (waiting for an answer, cancelled). */
type Next = 'next' | 'stop';

/**
 * A stepped action's execute run: creates the sandboxes, then runs each step's tool call in them —
 * each call decided first by the plan's policy (allow runs it, ask waits for an approval, deny fails
 * the step without running it), checkpointing after each write, stopping as constrained when the
 * budget is spent — and ends with the diff as an artifact. A failure is saved and reported by
 * `recorder.fail`, which ends the run (PlanStopped).
 */
class StepRun {
  private readonly io: StepInputs;
  private readonly plan: Plan;
  private readonly turn: TaskHandle;
  private readonly yes: boolean;
  private readonly record: (call: ToolCallRecord) => Promise<void>;
  // Set by begin(): the wall clock starts, and the hooks' working directory exists, only then.
  private policy: ReturnType<typeof policyOf> | undefined;
  private tick: () => void = () => {};
  private hooks: ToolCallHooks | undefined;
  private decisions: Decision[] = [];
  private changes = new ChangeTracker(false);
  private settings: Awaited<ReturnType<typeof commandSettings>> = { network: 'none', env: undefined };

  constructor(io: StepInputs, plan: Plan, turn: TaskHandle, yes: boolean) {
    this.io = io;
    this.plan = plan;
    this.turn = turn;
    this.yes = yes;
    this.record = callRecorder(io, turn);
  }

  async run(): Promise<void> {
    const sandbox = await this.begin();
    for (let i = this.plan.cursor; i < this.plan.stepsTotal; i++) if ((await this.step(i, sandbox)) === 'stop') return;
    await this.finish();
  }

  /** Starts (or resumes) the phase, makes or restores the sandboxes; the sandbox the steps run in. */
  private async begin(): Promise<SandboxInfo> {
    const { io, plan, turn } = this;
    const resuming = plan.phase === 'execute';
    startPhase(plan, 'execute');
    attachTask(plan, 'execute', turn.task.id);
    await io.recorder.save(plan);
    await turn.status(
      'TASK_STATE_WORKING',
      resuming ? `Resuming execute at step ${plan.cursor + 1}` : 'Executing in a sandbox',
      planMeta(plan),
    );
    this.tick = wallClock(plan);
    const atCheckpoint = await prepareSandboxes(io, plan, turn, { restore: resuming });
    this.settings = await commandSettings(io, plan);
    this.decisions = await io.plans.decisions(plan.id);
    this.policy = policyOf(plan);
    this.changes = new ChangeTracker(atCheckpoint);
    const sandbox = plan.sandboxes[0];
    if (!sandbox)
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'internal',
        message: 'the plan has no sandbox',
        recoverable: false,
      });
    this.hooks = planToolCallHooks(io.hooks, plan, turn);
    return sandbox;
  }

  private async step(i: number, sandbox: SandboxInfo): Promise<Next> {
    const c = await this.decided(i);
    this.tick();
    await this.checkBudget();
    if (c.verdict.decision === 'deny') {
      await this.notRun(c, sandbox, `denied by policy: ${c.verdict.reason}`);
      return this.io.recorder.fail(this.plan, this.turn, 'execute', {
        kind: 'policy',
        message: `step ${i + 1} (${c.toolName}) was not run: ${c.verdict.reason}`,
        recoverable: true,
        hint: `correct the step (agents plan correct ${c.d.id} …), or make a new plan under another automation profile (agents plan use … --automation-profile NAME)`,
      });
    }
    const approval = await this.approval(c);
    if (approval !== 'run') return approval;
    await this.turn.status(
      'TASK_STATE_WORKING',
      `Step ${i + 1}/${this.plan.stepsTotal}: ${c.toolName} ${argSummary(c.args)}`,
      planMeta(this.plan, { step: i + 1 }),
    );
    const veto = await this.hooks?.before(c.toolName, c.args);
    if (veto) {
      await this.notRun(c, sandbox, vetoText(veto));
      return this.io.recorder.fail(this.plan, this.turn, 'execute', {
        kind: 'policy',
        message: `step ${i + 1} (${c.toolName}) was not run: ${vetoText(veto)}`,
        recoverable: true,
        hint: `see the hook's output with agents task get ${this.turn.task.id}; correct the step (agents plan correct ${c.d.id} …) or run agents plan execute ${this.plan.id} once the hook allows it`,
      });
    }
    return this.runCall(c, sandbox);
  }

  /** Step `i`'s decision, its tool as defined now, and the policy's verdict on the call. */
  private async decided(i: number): Promise<StepCall> {
    const { io, plan, turn } = this;
    const d = this.decisions.find((x) => x.type === 'step' && x.stepIndex === i && !x.superseded);
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
    let normalized: Record<string, unknown> | undefined;
    try {
      normalized = normalizeArgs(toolName, args);
    } catch {
      normalized = undefined; // refused again where the call would run
    }
    const verdict = decideCall(this.policy ?? policyOf(plan), {
      tool: toolName,
      writes: tool.writes,
      command: normalized && commandOfCall(tool, normalized),
    });
    return { index: i, d, toolName, tool, args, normalized, verdict };
  }

  /** Stops the run constrained when its tool-call or wall-time budget is spent. */
  private async checkBudget(): Promise<void> {
    const { plan } = this;
    const { usage: u, budget: b } = plan;
    const over =
      u.toolCalls >= b.maxToolCalls
        ? {
            message: `budget exceeded: ${u.toolCalls} of ${b.maxToolCalls} tool calls used`,
            hint: 'raise it with agents plan execute --max-tool-calls N',
          }
        : u.wallMs >= b.maxWallMs
          ? {
              message: `budget exceeded: ${Math.round(u.wallMs / 1000)} s of ${Math.round(b.maxWallMs / 1000)} s wall time used`,
              hint: 'raise it with agents plan execute --max-wall-seconds N',
            }
          : undefined;
    if (over)
      await this.io.recorder.fail(
        plan,
        this.turn,
        'execute',
        { kind: 'budget', recoverable: true, ...over },
        'constrained',
      );
  }

  /**
   * Whether the call runs: an `ask` verdict without `yes` and without an answer in this attempt
   * (answer() records it before resuming) makes the plan wait; a rejected one skips the step.
   */
  private async approval(c: StepCall): Promise<Next | 'run'> {
    const { io, plan, turn } = this;
    const i = c.index;
    const answered = this.decisions
      .filter((x) => x.type === 'approval' && x.parentId === c.d.id && x.attempt === plan.attempt)
      .at(-1);
    if (c.verdict.decision === 'ask' && !this.yes && !answered) {
      const request = {
        kind: 'tool-call' as const,
        planId: plan.id,
        decisionId: c.d.id,
        step: i + 1,
        of: plan.stepsTotal,
        tool: c.toolName,
        args: c.args,
        preview: previewOf(c.toolName, c.args),
        policy: c.verdict,
        options: ['approve', 'reject', 'reject-with-guidance'],
      };
      awaitAnswer(plan, { kind: 'tool-approval', taskId: turn.task.id, decisionId: c.d.id, request });
      await io.recorder.save(plan);
      await turn.status(
        'TASK_STATE_INPUT_REQUIRED',
        `Approve step ${i + 1}/${plan.stepsTotal}: ${c.toolName} ${argSummary(c.args)}? (approve / reject / reject with guidance)`,
        { data: { approvalRequest: request }, ...planMeta(plan) },
      );
      return 'stop';
    }
    if (answered?.chosen === 'reject') {
      moveCursor(plan, i + 1);
      await io.recorder.save(plan);
      await turn.status('TASK_STATE_WORKING', `Step ${i + 1}/${plan.stepsTotal} skipped: rejected`, planMeta(plan));
      return 'next';
    }
    return 'run';
  }

  /** A call that did not run, in the execution log. */
  private notRun(c: StepCall, sandbox: SandboxInfo, summary: string): Promise<void> {
    return this.record({
      id: newId(),
      planId: this.plan.id,
      decisionId: c.d.id,
      tool: c.toolName,
      args: c.args,
      ok: false,
      summary,
      durationMs: 0,
      filesTouched: [],
      exitCode: null,
      resource: sandbox.resource,
      createdAt: this.io.recorder.now().toISOString(),
      policy: c.verdict,
    });
  }

  /** Runs the call in the sandbox, records it (a checkpoint after a write) and moves the cursor past it. */
  private async runCall(c: StepCall, sandbox: SandboxInfo): Promise<Next> {
    const { io, plan, turn, hooks, changes } = this;
    const i = c.index;
    const { network, env } = this.settings;
    const t0 = Date.now();
    const remaining = Math.max(1000, plan.budget.maxWallMs - plan.usage.wallMs);
    const result = await io.tools.run({
      tool: c.tool,
      args: c.normalized ?? normalizeArgs(c.toolName, c.args),
      sandbox,
      signal: turn.signal,
      timeoutMs: Math.min(io.commandTimeoutMs ?? 300_000, remaining),
      network,
      env,
    });
    countToolCall(plan);
    changes.ran(c.tool, result, hooks?.ran ?? 0);
    this.tick();
    const call = this.callRecord(c, sandbox, result, Date.now() - t0);
    if (turn.signal.aborted) {
      await io.plans.putToolCall(call);
      return 'stop';
    }
    if (result.ok && c.tool.writes) {
      const known = changes.since();
      const cp = await io.recorder.checkpoint(
        plan,
        `after-step:${i + 1}`,
        i + 1,
        c.d.id,
        known && { [sandbox.resource]: known },
      );
      changes.checkpointed();
      call.checkpointId = cp.id;
    }
    await this.record(call);
    await hooks?.after(c.toolName, c.args, result);
    changes.hooks(hooks?.ran ?? 0);
    if (!result.ok) {
      return io.recorder.fail(plan, turn, 'execute', {
        kind: 'tool',
        message: `step ${i + 1} (${c.toolName}) failed: ${result.summary}`,
        recoverable: true,
        // The steps come from the action's arguments: a correction re-strategizes the same ones, so
        // what is left is a cause outside the plan (a file, the repository), or a new plan.
        hint: `fix the cause and run agents plan execute ${plan.id} to resume; if an argument is wrong, the steps of ${plan.action} cannot change: make a new plan (agents plan use ${plan.action} ${plan.projects.join(' ')} --arg NAME=VALUE …)`,
      });
    }
    moveCursor(plan, i + 1);
    await io.recorder.save(plan);
    await turn.status(
      'TASK_STATE_WORKING',
      `  ✓ ${result.summary} (${call.durationMs} ms)${call.checkpointId ? `, checkpoint ${call.checkpointId}` : ''}`,
      planMeta(plan, { step: i + 1, toolCall: call.id, checkpoint: call.checkpointId }),
    );
    return 'next';
  }

  /** The record of a call that ran (a cancelled run's: not ok, `cancelled`). */
  private callRecord(c: StepCall, sandbox: SandboxInfo, result: ToolCallResult, durationMs: number): ToolCallRecord {
    const aborted = this.turn.signal.aborted;
    const output = keptOutput(result);
    return {
      id: newId(),
      planId: this.plan.id,
      decisionId: c.d.id,
      tool: c.toolName,
      args: c.args,
      ok: result.ok && !aborted,
      summary: aborted ? 'cancelled' : result.summary,
      durationMs,
      filesTouched: result.filesTouched,
      exitCode: result.exitCode ?? null,
      resource: sandbox.resource,
      network: this.settings.network,
      ...(result.confinement ? { confinement: result.confinement } : {}),
      ...(output ? { output } : {}),
      createdAt: this.io.recorder.now().toISOString(),
      policy: c.verdict,
    };
  }

  /** The last checkpoint, the diff as an artifact, and the phase complete. */
  private async finish(): Promise<void> {
    const { io, plan, turn } = this;
    await io.recorder.checkpoint(plan, 'before-apply', plan.stepsTotal);
    const stats = await diffArtifact(io, plan, turn);
    completePhase(plan);
    this.tick();
    await io.recorder.save(plan);
    await turn.status(
      'TASK_STATE_COMPLETED',
      `Executed ${plan.stepsTotal} step${plan.stepsTotal === 1 ? '' : 's'}: ${changedFiles(stats)}. Next: agents plan diff ${plan.id}, then agents plan apply ${plan.id}`,
      planMeta(plan),
    );
  }
}
