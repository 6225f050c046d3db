/**
 * The execute phase of a plan from a goal: the plan's execution actor carries out the strategy in
 * the sandbox with a tool-calling loop. Every call is validated against its schema (a malformed or
 * unknown one is told to the model), decided by the plan's policy (deny: told; ask: the run waits
 * for an approval, its conversation kept in the transcript store), run in the sandbox, recorded and —
 * when it wrote — checkpointed. Budgets are checked before every model step and every tool call.
 * When the actor calls `finish` (or stops calling tools), the verify command runs, the assessment is
 * recorded as a decision, and `plan.done` says whether the definition of done was met.
 */
import type { Decision, Plan, PlanError } from '../../../domain/plan/plan.ts';
import { policyOf } from '../../../domain/plan/plan.ts';
import { awaitAnswer, completePhase, startPhase } from '../../../domain/plan/plan-state.ts';
import { decideToolCall, type PolicySnapshot } from '../../../domain/plan/policy.ts';
import type { DeepReadonly } from '../../../domain/readonly.ts';
import { LLM_ACTOR_DEFAULTS } from '../../../domain/registry/actor.definition.ts';
import { fallbacksOf } from '../../../domain/registry/fallbacks.ts';
import { ProviderFailure } from '../../ports/language-model.port.ts';
import type { SandboxInfo } from '../../ports/sandbox.port.ts';
import { MAX_MALFORMED_STEPS, runAgentLoop } from '../../agent/agent-loop.ts';
import type { AgentConfig, ApprovalGate, CallAnswer } from '../../agent/agent.types.ts';
import { changedFiles, commandSettings, diffArtifact, prepareSandboxes, wallClock } from '../execute-shared.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from '../plan.recorder.ts';
import { planToolCallHooks } from '../../hooks/plan-hooks.ts';
import type { ToolCallHooks } from '../../hooks/tool-call-hooks.ts';
import { argSummary, previewFields } from '../tool-call-preview.ts';
import type { FinishArgs } from './execution.prompt.ts';
import { PlanActorFailure, PlanModel, planToolsOf, type PlanLlmDeps, type PlanToolSet } from './plan-model.ts';
import { PlanCallRecorder, planAgentTool, type PlanToolRun } from './plan-agent.ts';
import { PlanBudget } from './plan-budget.ts';
import { answerFor, runVerify } from './execute-verify.ts';
import { finishTool, freshTranscript } from './execution-opening.ts';
import { recordAssessment } from './execution-assessment.ts';
import { ExecutionText, type ExecutionTranscript } from './execution-text.ts';
import { attachTask, judgeDone } from '../../../domain/plan/plan-progress.ts';

export type { ExecutionTranscript } from './execution-text.ts';

const DEFAULT_COMMAND_MS = 300_000;

/** The execute phase of a plan whose `actors` are set (see executeSteps). */
export async function executeWithActor(io: PlanRunPorts, plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
  const llm = io.llm;
  const actors = plan.actors;
  if (!llm || !actors) {
    startPhase(plan, 'execute');
    return io.recorder.fail(plan, turn, 'execute', {
      kind: 'actor',
      message: 'this server has no LLM providers: a plan from a goal cannot be executed here',
      recoverable: true,
      hint: 'run it on a server started with LLM support, then agents plan execute again',
    });
  }
  const stored = (await llm.transcripts.get(turn.task.id)) as ExecutionTranscript | undefined;
  // Called again on the waiting task, after `answer` recorded the approval.
  const answering =
    plan.phase === 'execute' &&
    plan.state === 'processing' &&
    stored?.pending !== undefined &&
    typeof stored.system === 'string';
  const previousError = plan.error;
  const resumed = plan.phase === 'execute' && !answering;
  startPhase(plan, 'execute');
  // A run decides the definition of done anew when it finishes.
  if (!answering) judgeDone(plan, undefined);
  attachTask(plan, 'execute', turn.task.id);
  await io.recorder.save(plan);
  await turn.status(
    'TASK_STATE_WORKING',
    answering
      ? 'Continuing after the answer'
      : resumed
        ? `Resuming execute with ${actors.execution} in a fresh conversation`
        : `Executing with ${actors.execution} in a sandbox`,
    planMeta(plan),
  );
  const run = new ExecutionRun(io, llm, plan, turn, yes, actors.execution);
  try {
    await run.start({ stored: answering ? stored : undefined, resumed, previousError });
  } catch (err) {
    if (turn.signal.aborted) return;
    if (err instanceof PlanActorFailure)
      return run.stop(err.error, err.error.kind === 'budget' ? 'constrained' : 'errored');
    throw err;
  }
}

class ExecutionRun {
  private readonly tick: () => void;
  private readonly policy: DeepReadonly<PolicySnapshot>;
  private readonly signal: AbortSignal;
  private model!: PlanModel;
  private tools!: PlanToolSet;
  private root!: Decision;
  private sandbox!: SandboxInfo;
  private commands!: Awaited<ReturnType<typeof commandSettings>>;
  private transcript!: ExecutionTranscript;
  private answer: CallAnswer | undefined;
  private hooks: ToolCallHooks | undefined;
  private recorder!: PlanCallRecorder;
  private readonly text: ExecutionText;

  private readonly io: PlanRunPorts;
  private readonly llm: PlanLlmDeps;
  private readonly plan: Plan;
  private readonly turn: TaskHandle;
  private readonly yes: boolean;
  private readonly actorName: string;

  constructor(io: PlanRunPorts, llm: PlanLlmDeps, plan: Plan, turn: TaskHandle, yes: boolean, actorName: string) {
    this.io = io;
    this.llm = llm;
    this.plan = plan;
    this.turn = turn;
    this.yes = yes;
    this.actorName = actorName;
    this.tick = wallClock(plan);
    this.policy = policyOf(plan);
    this.signal = turn.signal;
    this.text = new ExecutionText(turn, plan, llm.transcripts, actorName);
  }

  async start(opts: {
    stored: ExecutionTranscript | undefined;
    resumed: boolean;
    previousError: Plan['error'];
  }): Promise<void> {
    const decisions = await this.prepare(opts);
    this.model = await this.openModel();
    this.tools = await planToolsOf(
      this.model.def,
      async (n) => (await this.io.registry.use('tool', n))?.definition,
      false,
    );
    if (opts.stored) {
      this.transcript = opts.stored;
      this.answer = answerFor(decisions, this.root.id, this.plan.attempt, opts.stored);
    } else
      this.transcript = await freshTranscript(
        { io: this.io, llm: this.llm, plan: this.plan, model: this.model, signal: this.signal },
        decisions,
        { ...opts, toolProblems: this.tools.problems },
      );
    await this.loop();
  }

  /** The sandbox (made or restored), command settings, hooks, the strategy to carry out; the plan's decisions. */
  private async prepare(opts: {
    stored: ExecutionTranscript | undefined;
    resumed: boolean;
    previousError: Plan['error'];
  }): Promise<Decision[]> {
    const { io, plan } = this;
    // A conflicted rebase left its markers in the sandbox for the actor to resolve: nothing is reset.
    if (!opts.stored)
      await prepareSandboxes(io, plan, this.turn, { restore: opts.resumed && opts.previousError?.kind !== 'conflict' });
    const sandbox = plan.sandboxes[0];
    if (!sandbox) return this.stop({ kind: 'internal', message: 'the plan has no sandbox', recoverable: false });
    this.sandbox = sandbox;
    this.commands = await commandSettings(io, plan);
    this.hooks = planToolCallHooks(io.hooks, plan, this.turn);
    const decisions = await io.plans.decisions(plan.id);
    const root = decisions.find((d) => d.type === 'strategy' && !d.superseded);
    if (!root)
      return this.stop({
        kind: 'strategy',
        message: 'the plan has no strategy to carry out',
        recoverable: true,
        hint: `strategize it again with agents plan correct <decision> --mode revert, or make a new plan`,
      });
    this.root = root;
    this.recorder = new PlanCallRecorder(io, plan, this.turn, {
      decisionId: () => this.root.id,
      sandbox,
      network: this.commands.network,
      tick: this.tick,
    });
    return decisions;
  }

  /** The execution actor's model (with its fallbacks, reported on the task as they are used). */
  private openModel(): Promise<PlanModel> {
    const { io, plan } = this;
    return PlanModel.open(this.actorName, async (n) => (await io.registry.use('actor', n))?.definition, this.llm, {
      report: (fallbacks, text) =>
        this.turn.status('TASK_STATE_WORKING', text, { ...planMeta(plan), taskMetadata: { fallbacks } }),
      earlier: fallbacksOf(this.turn.task.metadata),
      spender: this.turn.by,
    });
  }

  private async loop(): Promise<void> {
    const { plan, model } = this;
    const maxSteps = model.def.maxToolSteps ?? LLM_ACTOR_DEFAULTS.maxToolSteps;
    const budget = new PlanBudget(plan, this.tick, (u) => model.cost(u));
    const outcome = await runAgentLoop(this.loopConfig(budget, maxSteps), this.transcript);
    const freshRun = `run agents plan execute ${plan.id} to go on in a fresh conversation (everything done so far is kept)`;
    switch (outcome.kind) {
      case 'waiting':
        return;
      case 'stopped':
        return this.finish(this.transcript.finishing ?? { assessment: 'the actor stopped without an assessment' });
      case 'answered':
        return this.finish({ assessment: outcome.text.trim() || 'the actor stopped without an assessment' });
      case 'step-limit':
        return this.finish({
          assessment: `${outcome.text.trim() || 'no summary'}\n(the actor used its ${maxSteps} tool steps, maxToolSteps of ${this.actorName})`,
        });
      case 'invalid-calls':
        return this.stop({
          kind: 'actor',
          message: `${this.actorName} made only invalid tool calls ${MAX_MALFORMED_STEPS} steps in a row; the last: ${outcome.last}`,
          recoverable: true,
          hint: `the model may not handle tools well: make a new plan with another execution actor, or run agents plan execute ${plan.id} to try again`,
        });
      case 'window':
        return this.stop({
          kind: 'actor',
          message: `the conversation no longer fits ${this.actorName}'s context window (${outcome.room} tokens after ${outcome.reserve} reserved for the answer)`,
          recoverable: true,
          hint: `${freshRun}, or raise contextWindow of ${this.actorName} if the model has a larger window`,
        });
      case 'budget':
        return this.stop(
          budget.error ?? { kind: 'budget', message: outcome.stop.message, recoverable: true },
          'constrained',
        );
    }
  }

  /** The agent loop as the execution actor runs it: the plan's tools, policy, approvals, hooks and budgets. */
  private loopConfig(budget: PlanBudget, maxSteps: number): AgentConfig {
    const { model } = this;
    const run: PlanToolRun = {
      io: this.io,
      sandbox: this.sandbox,
      network: this.commands.network,
      env: this.commands.env,
      timeoutMs: () => this.callTimeoutMs(),
    };
    return {
      model: model.agentModel(),
      tracer: model.tracer,
      system: this.transcript.system,
      tools: this.tools.tools.map((t) => planAgentTool(t, run)),
      control: [finishTool(this.model, this.transcript)],
      decide: (tool, args) =>
        decideToolCall(this.policy, {
          tool: tool.ref,
          readOnly: tool.readOnly,
          writes: tool.writes,
          command: tool.commandOf(args),
        }),
      policyName: "the plan's automation profile",
      approvals: {
        yes: this.yes,
        always: () => this.transcript.always ?? [],
        remember: (rule) => {
          (this.transcript.always ??= []).push(rule);
          return Promise.resolve();
        },
        ask: (e) => this.ask(e),
      },
      recorder: this.recorder,
      hooks: this.hooks,
      budget,
      validate: (schema, value) => model.validate(schema, value),
      signal: this.signal,
      maxSteps,
      window: {
        contextWindow: model.contextWindow,
        reserve: Math.min(model.maxTokens, Math.floor(model.contextWindow / 2)),
      },
      onText: (delta, step) => this.text.stream(delta, step),
      save: (t) => this.text.save(t),
      answer: this.answer,
    };
  }

  /** A call's time limit: the command timeout, within what is left of the wall-clock budget. */
  private callTimeoutMs(): number {
    const remaining = Math.max(1000, this.plan.budget.maxWallMs - this.plan.usage.wallMs);
    return Math.min(this.io.commandTimeoutMs ?? DEFAULT_COMMAND_MS, remaining);
  }

  /** Stops the run waiting for the user's answer on this task (its conversation was saved to go on with). */
  private async ask(e: Parameters<ApprovalGate['ask']>[0]): Promise<void> {
    const { plan, io } = this;
    const step = plan.usage.toolCalls + 1;
    const p = e.preview;
    const request = {
      kind: 'tool-call' as const,
      planId: plan.id,
      decisionId: this.root.id,
      callId: e.call.id,
      step,
      tool: e.ref,
      args: e.args,
      ...previewFields(e.ref, e.args, p),
      policy: e.verdict,
      options: ['approve', 'always', 'reject', 'reject-with-guidance'],
    };
    awaitAnswer(plan, { kind: 'tool-approval', taskId: this.turn.task.id, decisionId: this.root.id, request });
    this.tick();
    await io.recorder.save(plan);
    const what = p.command !== undefined ? `run \`${p.command}\`` : `${e.ref} ${argSummary(e.args)}`;
    await this.turn.status(
      'TASK_STATE_INPUT_REQUIRED',
      `Approve step ${step}: ${what}?${p.diff ? `\n${p.diff.trimEnd()}\n` : ''} (approve / always / reject / reject with guidance)`,
      { data: { approvalRequest: request }, ...planMeta(plan, { step }) },
    );
  }

  /**
   * Ends the work: runs the verify command, records the assessment, sets `plan.done`, and completes
   * the phase with the diff — saying plainly when the definition of done was not met.
   */
  private async finish(f: FinishArgs): Promise<void> {
    const { plan, io } = this;
    await this.text.close();
    await this.text.keep(this.transcript);
    // Conflict markers (a rebase's, left for the actor) must be gone before the work is done.
    const changed = (await io.recorder.diffs(plan)).flatMap((d) =>
      d.diff.files.filter((f) => f.status !== 'deleted').map((f) => f.path),
    );
    const marked = await io.sandboxes.unresolved(this.sandbox, changed);
    if (marked.length > 0)
      return this.stop({
        kind: 'conflict',
        message: `conflict markers remain in ${marked.join(', ')}`,
        recoverable: true,
        files: marked,
        hint: `resolve them by hand in ${this.sandbox.root} and run agents plan rebase ${plan.id} --continue, or give the actor guidance: agents plan prompt ${plan.id} "…"`,
      });
    const verify = plan.verify ? await this.verify(plan.verify) : undefined;
    const { decision, met, verifyWords, said } = await recordAssessment(io.recorder, plan, {
      rootId: this.root.id,
      finish: f,
      verify,
      snapshot: this.transcript.snapshot,
    });
    await this.turn.artifact(
      { artifactId: 'decisions', name: 'decisions', parts: [{ data: decision, mediaType: 'application/json' }] },
      { append: true },
    );
    await io.recorder.checkpoint(plan, 'before-apply', plan.cursor, decision.id);
    const stats = await diffArtifact(io, plan, this.turn);
    completePhase(plan);
    this.tick();
    await io.recorder.save(plan);
    const calls = plan.usage.toolCalls;
    const outcome = met
      ? `definition of done met${verifyWords ? ` (${verifyWords})` : ''}`
      : `definition of done NOT met: ${verifyWords ?? said}`;
    await this.turn.status(
      'TASK_STATE_COMPLETED',
      `Executed ${calls} tool call${calls === 1 ? '' : 's'}: ${changedFiles(stats)}; ${outcome}. Next: agents plan diff ${plan.id}, then ${met ? `agents plan apply ${plan.id}` : `correct the plan (agents plan correct ${decision.id} --guidance …) or apply it as it is`}`,
      planMeta(plan, { done: plan.done }),
    );
  }

  /** Runs the plan's verify command in the sandbox (see runVerify). */
  private verify(v: NonNullable<Plan['verify']>): Promise<NonNullable<Plan['done']>['verify']> {
    return runVerify(
      {
        io: this.io,
        plan: this.plan,
        turn: this.turn,
        rootId: this.root.id,
        recorder: this.recorder,
        tick: this.tick,
        run: {
          io: this.io,
          sandbox: this.sandbox,
          network: this.commands.network,
          env: this.commands.env,
          timeoutMs: () => this.callTimeoutMs(),
        },
      },
      v,
    );
  }

  /**
   * Stops the phase (errored, or constrained for a budget) after a checkpoint of the work so far,
   * so that a resumed run starts from everything done.
   */
  async stop(error: PlanError, state: 'errored' | 'constrained' = 'errored'): Promise<never> {
    if (this.signal.aborted) throw new ProviderFailure('cancelled', 'cancelled', '');
    const { plan, io } = this;
    if (plan.sandboxes.length && plan.phase === 'execute' && plan.state === 'processing')
      await io.recorder.checkpoint(plan, state, plan.cursor).catch(() => undefined);
    await this.text.close().catch(() => undefined);
    // Unset until the run knows its conversation (it may stop before).
    await this.text.keep(this.transcript as ExecutionTranscript | undefined).catch(() => undefined);
    this.tick();
    return io.recorder.fail(plan, this.turn, 'execute', error, state);
  }
}
