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
import { awaitAnswer, completePhase, policyOf, startPhase } from '../../../domain/plan/plan.ts';
import { decideToolCall, type PolicySnapshot } from '../../../domain/plan/policy.ts';
import { LLM_ACTOR_DEFAULTS } from '../../../domain/registry/actor.definition.ts';
import { fallbacksOf } from '../../../domain/registry/fallbacks.ts';
import { snapshotRef, type AssembledContext, type ContextSnapshotRef } from '../../context/context.types.ts';
import { ProviderFailure, type ModelTool } from '../../ports/language-model.port.ts';
import type { SandboxInfo } from '../../ports/sandbox.port.ts';
import type { Transcript } from '../../ports/transcript.port.ts';
import { MAX_MALFORMED_STEPS, runAgentLoop } from '../../agent/agent-loop.ts';
import type { ApprovalGate, CallAnswer, ControlTool } from '../../agent/agent.types.ts';
import { changedFiles, commandSettings, diffArtifact, prepareSandboxes, wallClock } from '../execute-shared.ts';
import type { PlanWorkbench, TaskHandle } from '../plan-workbench.ts';
import { planToolCallHooks } from '../../hooks/plan-hooks.ts';
import type { ToolCallHooks } from '../../hooks/tool-call-hooks.ts';
import { argSummary, previewFields } from '../tool-call-preview.ts';
import {
  decisionTerms,
  executionSystemPrompt,
  FINISH_SCHEMA,
  FINISH_TOOL,
  guidanceOf,
  openingMessage,
  type FinishArgs,
} from './execution-prompt.ts';
import { PlanActorFailure, PlanModel, planToolsOf, type PlanLlmDeps, type PlanToolSet } from './plan-model.ts';
import { PlanCallRecorder, planAgentTool, type PlanToolRun } from './plan-agent.ts';
import { PlanBudget } from './plan-budget.ts';
import { answerFor, runVerify } from './execute-verify.ts';
import { attachTask, judgeDone } from '../../../domain/plan/plan-progress.ts';
import { messageOf } from '../../../domain/errors.ts';

/** An execution's conversation as kept in the transcript store while it waits for an approval. */
export interface ExecutionTranscript extends Transcript {
  /** The system prompt of this conversation: an answered approval goes on with the same one. */
  system: string;
  /** The context the actor was given. */
  snapshot?: ContextSnapshotRef | undefined;
  /** The actor called finish in the step whose calls are pending. */
  finishing?: FinishArgs | undefined;
}

const DEFAULT_COMMAND_MS = 300_000;

const FINISH_OFFERED: ModelTool = {
  name: FINISH_TOOL,
  description:
    'End the work: say whether the definition of done is met, with your assessment (and a confidence from 0 to 1). The verify command, if any, runs after this.',
  inputSchema: FINISH_SCHEMA,
};

/** The execute phase of a plan whose `actors` are set (see executeSteps). */
export async function executeWithActor(wb: PlanWorkbench, plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
  const llm = wb.deps.llm;
  const actors = plan.actors;
  if (!llm || !actors) {
    startPhase(plan, 'execute');
    return wb.fail(plan, turn, 'execute', {
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
  await wb.save(plan);
  await turn.status(
    'TASK_STATE_WORKING',
    answering
      ? 'Continuing after the answer'
      : resumed
        ? `Resuming execute with ${actors.execution} in a fresh conversation`
        : `Executing with ${actors.execution} in a sandbox`,
    wb.meta(plan),
  );
  const run = new ExecutionRun(wb, llm, plan, turn, yes, actors.execution);
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
  private readonly policy: PolicySnapshot;
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
  private textOpen = false;
  /** The step whose words were streamed last. */
  private textStep = -1;

  private readonly wb: PlanWorkbench;
  private readonly llm: PlanLlmDeps;
  private readonly plan: Plan;
  private readonly turn: TaskHandle;
  private readonly yes: boolean;
  private readonly actorName: string;

  constructor(wb: PlanWorkbench, llm: PlanLlmDeps, plan: Plan, turn: TaskHandle, yes: boolean, actorName: string) {
    this.wb = wb;
    this.llm = llm;
    this.plan = plan;
    this.turn = turn;
    this.yes = yes;
    this.actorName = actorName;
    this.tick = wallClock(plan);
    this.policy = policyOf(plan);
    this.signal = turn.signal;
  }

  async start(opts: {
    stored: ExecutionTranscript | undefined;
    resumed: boolean;
    previousError: PlanError | undefined;
  }): Promise<void> {
    const { wb, plan } = this;
    // A conflicted rebase left its markers in the sandbox for the actor to resolve: nothing is reset.
    if (!opts.stored)
      await prepareSandboxes(wb, plan, this.turn, { restore: opts.resumed && opts.previousError?.kind !== 'conflict' });
    const sandbox = plan.sandboxes[0];
    if (!sandbox) return this.stop({ kind: 'internal', message: 'the plan has no sandbox', recoverable: false });
    this.sandbox = sandbox;
    this.commands = await commandSettings(wb, plan);
    this.hooks = planToolCallHooks(wb.deps.hooks, plan, this.turn);
    const decisions = await wb.deps.plans.decisions(plan.id);
    const root = decisions.find((d) => d.type === 'strategy' && !d.superseded);
    if (!root)
      return this.stop({
        kind: 'strategy',
        message: 'the plan has no strategy to carry out',
        recoverable: true,
        hint: `strategize it again with agents plan correct <decision> --mode revert, or make a new plan`,
      });
    this.root = root;
    this.recorder = new PlanCallRecorder(wb, plan, this.turn, {
      decisionId: () => this.root.id,
      sandbox,
      network: this.commands.network,
      tick: this.tick,
    });
    this.model = await PlanModel.open(
      this.actorName,
      async (n) => (await wb.deps.registry.use('actor', n))?.definition,
      this.llm,
      {
        report: (fallbacks, text) =>
          this.turn.status('TASK_STATE_WORKING', text, { ...wb.meta(plan), taskMetadata: { fallbacks } }),
        earlier: fallbacksOf(this.turn.task.metadata),
      },
    );
    this.tools = await planToolsOf(
      this.model.def,
      async (n) => (await wb.deps.registry.use('tool', n))?.definition,
      false,
    );
    if (opts.stored) {
      this.transcript = opts.stored;
      this.answer = answerFor(decisions, root.id, plan.attempt, opts.stored);
    } else {
      const context = await this.context(decisions);
      const diff = opts.resumed ? (await wb.diffs(plan)).map((d) => d.diff.unified).join('') : undefined;
      const checkpoints = await wb.deps.plans.checkpoints(plan.id);
      const since = checkpoints.at(-1)?.createdAt ?? '';
      this.transcript = {
        messages: [
          {
            role: 'user',
            text: openingMessage({
              resumed: opts.resumed,
              diff,
              previousError: opts.previousError,
              guidanceSince: opts.resumed ? guidanceOf(decisions).filter((d) => d.createdAt >= since) : [],
            }),
          },
        ],
        steps: 0,
        usage: { inputTokens: 0, outputTokens: 0 },
        toolCalls: 0,
        system: executionSystemPrompt({
          plan,
          decisions,
          context,
          actorPrompt: this.model.def.systemPrompt,
          toolProblems: this.tools.problems,
        }),
        snapshot: context ? snapshotRef(context) : undefined,
      };
    }
    await this.loop();
  }

  /** What the context service gives the actor for this goal (in the execute view). */
  private async context(decisions: Decision[]): Promise<AssembledContext | undefined> {
    const project = this.plan.projects[0];
    if (!project) return undefined;
    try {
      return await this.llm.context.assemble({
        project,
        view: 'execute',
        goal: this.plan.description,
        action: this.plan.action,
        decisions: decisionTerms(decisions),
        modelWindow: this.model.contextWindow,
        answerReserve: this.model.maxTokens,
        signal: this.signal,
      });
    } catch (err) {
      if (this.signal.aborted) throw err;
      const hint = (err as { hint?: unknown }).hint;
      return this.stop({
        kind: 'internal',
        message: `the context for the execution actor could not be assembled: ${messageOf(err)}`,
        recoverable: true,
        hint: typeof hint === 'string' ? hint : `fix the cause, then run agents plan execute ${this.plan.id}`,
      });
    }
  }

  private async loop(): Promise<void> {
    const { plan, model } = this;
    const maxSteps = model.def.maxToolSteps ?? LLM_ACTOR_DEFAULTS.maxToolSteps;
    const budget = new PlanBudget(plan, this.tick, (u) => model.cost(u));
    const run: PlanToolRun = {
      wb: this.wb,
      sandbox: this.sandbox,
      network: this.commands.network,
      env: this.commands.env,
      timeoutMs: () => this.callTimeoutMs(),
    };
    const outcome = await runAgentLoop(
      {
        model: model.agentModel(),
        system: this.transcript.system,
        tools: this.tools.tools.map((t) => planAgentTool(t, run)),
        control: [this.finishTool()],
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
        onText: (delta, step) => this.stream(delta, step),
        save: (t) => this.saveTranscript(t),
        answer: this.answer,
      },
      this.transcript,
    );
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

  /** The `finish` tool: the actor's assessment; the run ends after this step's calls. */
  private finishTool(): ControlTool {
    return {
      tool: FINISH_OFFERED,
      handle: (args) => {
        const problems = args.ok ? this.model.validate(FINISH_SCHEMA, args.value) : [args.problem];
        if (!args.ok || problems.length)
          return {
            output: `The arguments of ${FINISH_TOOL} are not valid: ${problems.slice(0, 10).join('; ')}. Call it again with {"done": true|false, "assessment": "…"}.`,
            isError: true,
          };
        const v = args.value as { done: boolean; assessment: string; confidence?: number };
        this.transcript.finishing = { done: v.done, assessment: v.assessment, confidence: v.confidence };
        return {
          output: 'Noted: the run ends after this step; the verify command (if any) runs now.',
          isError: false,
          stop: true,
        };
      },
    };
  }

  /** A call's time limit: the command timeout, within what is left of the wall-clock budget. */
  private callTimeoutMs(): number {
    const remaining = Math.max(1000, this.plan.budget.maxWallMs - this.plan.usage.wallMs);
    return Math.min(this.wb.deps.commandTimeoutMs ?? DEFAULT_COMMAND_MS, remaining);
  }

  /** The model's words, streamed as the `execution` text artifact (a new step starts a new paragraph). */
  private async stream(delta: string, step: number): Promise<void> {
    const text = this.textOpen && step !== this.textStep ? `\n\n${delta}` : delta;
    this.textStep = step;
    this.textOpen = true;
    await this.turn.artifact(
      { artifactId: 'execution', name: 'execution', parts: [{ text }], metadata: { actor: this.actorName } },
      { append: true },
    );
  }

  private async saveTranscript(t: Transcript): Promise<void> {
    await this.turn.stored(); // the task's row first (see ActorTurn.stored)
    await this.llm.transcripts.save(this.turn.task.id, this.plan.contextId, t);
  }

  /** Stops the run waiting for the user's answer on this task (its conversation was saved to go on with). */
  private async ask(e: Parameters<ApprovalGate['ask']>[0]): Promise<void> {
    const { plan, wb } = this;
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
    await wb.save(plan);
    const what = p.command !== undefined ? `run \`${p.command}\`` : `${e.ref} ${argSummary(e.args)}`;
    await this.turn.status(
      'TASK_STATE_INPUT_REQUIRED',
      `Approve step ${step}: ${what}?${p.diff ? `\n${p.diff.trimEnd()}\n` : ''} (approve / always / reject / reject with guidance)`,
      { data: { approvalRequest: request }, ...wb.meta(plan, { step }) },
    );
  }

  /**
   * Ends the work: runs the verify command, records the assessment, sets `plan.done`, and completes
   * the phase with the diff — saying plainly when the definition of done was not met.
   */
  private async finish(f: FinishArgs): Promise<void> {
    const { plan, wb } = this;
    await this.closeText();
    await this.keepTranscript();
    // Conflict markers (a rebase's, left for the actor) must be gone before the work is done.
    const changed = (await wb.diffs(plan)).flatMap((d) =>
      d.diff.files.filter((f) => f.status !== 'deleted').map((f) => f.path),
    );
    const marked = await wb.deps.sandboxes.unresolved(this.sandbox, changed);
    if (marked.length > 0)
      return this.stop({
        kind: 'conflict',
        message: `conflict markers remain in ${marked.join(', ')}`,
        recoverable: true,
        files: marked,
        hint: `resolve them by hand in ${this.sandbox.root} and run agents plan rebase ${plan.id} --continue, or give the actor guidance: agents plan prompt ${plan.id} "…"`,
      });
    const verify = plan.verify ? await this.verify(plan.verify) : undefined;
    const met = verify ? verify.ok : f.done === true;
    const verifyWords = verify
      ? `verify \`${verify.command}\` ${verify.exitCode === 0 ? 'exited 0' : verify.exitCode === null ? `did not finish (${verify.summary})` : `exited ${verify.exitCode}`}`
      : undefined;
    const said =
      f.done === undefined
        ? 'the actor stopped without calling finish'
        : `the actor says it is ${f.done ? '' : 'not '}done`;
    const decision = await wb.record(plan, {
      type: 'assessment',
      parentId: this.root.id,
      question: 'Is the definition of done met?',
      chosen: met ? 'met' : 'not met',
      alternatives: [met ? 'not met' : 'met'],
      confidence: f.confidence ?? (verify ? 1 : 0.5),
      rationale: [f.assessment, `${said}${verifyWords ? `; ${verifyWords}` : ''}`].join('\n'),
      context: {
        by: verify ? 'verify' : 'assessment',
        actorDone: f.done ?? null,
        ...(this.transcript.snapshot ? { snapshot: this.transcript.snapshot } : {}),
        ...(verify ? { verify } : {}),
      },
    });
    judgeDone(plan, {
      met,
      by: verify ? 'verify' : 'assessment',
      ...(verify ? { verify } : {}),
      assessment: f.assessment,
      decisionId: decision.id,
      at: wb.now().toISOString(),
    });
    await this.turn.artifact(
      { artifactId: 'decisions', name: 'decisions', parts: [{ data: decision, mediaType: 'application/json' }] },
      { append: true },
    );
    await wb.checkpoint(plan, 'before-apply', plan.cursor, decision.id);
    const stats = await diffArtifact(wb, plan, this.turn);
    completePhase(plan);
    this.tick();
    await wb.save(plan);
    const calls = plan.usage.toolCalls;
    const outcome = met
      ? `definition of done met${verifyWords ? ` (${verifyWords})` : ''}`
      : `definition of done NOT met: ${verifyWords ?? said}`;
    await this.turn.status(
      'TASK_STATE_COMPLETED',
      `Executed ${calls} tool call${calls === 1 ? '' : 's'}: ${changedFiles(stats)}; ${outcome}. Next: agents plan diff ${plan.id}, then ${met ? `agents plan apply ${plan.id}` : `correct the plan (agents plan correct ${decision.id} --guidance …) or apply it as it is`}`,
      wb.meta(plan, { done: plan.done }),
    );
  }

  /** Runs the plan's verify command in the sandbox (see runVerify). */
  private verify(v: NonNullable<Plan['verify']>): Promise<NonNullable<Plan['done']>['verify']> {
    return runVerify(
      {
        wb: this.wb,
        plan: this.plan,
        turn: this.turn,
        rootId: this.root.id,
        recorder: this.recorder,
        tick: this.tick,
        run: {
          wb: this.wb,
          sandbox: this.sandbox,
          network: this.commands.network,
          env: this.commands.env,
          timeoutMs: () => this.callTimeoutMs(),
        },
      },
      v,
    );
  }

  /** The conversation as it ended (nothing pending: an answer can no longer continue it). */
  private async keepTranscript(): Promise<void> {
    // Unset until the run knows its conversation (it may stop before).
    const t = this.transcript as ExecutionTranscript | undefined;
    if (!t) return;
    const ended: ExecutionTranscript = { ...t, pending: undefined, finishing: undefined };
    await this.turn.stored();
    await this.llm.transcripts.save(this.turn.task.id, this.plan.contextId, ended);
  }

  private async closeText(): Promise<void> {
    if (!this.textOpen) return;
    this.textOpen = false;
    await this.turn.artifact(
      { artifactId: 'execution', name: 'execution', parts: [{ text: '' }] },
      { append: true, lastChunk: true },
    );
  }

  /**
   * Stops the phase (errored, or constrained for a budget) after a checkpoint of the work so far,
   * so that a resumed run starts from everything done.
   */
  async stop(error: PlanError, state: 'errored' | 'constrained' = 'errored'): Promise<never> {
    if (this.signal.aborted) throw new ProviderFailure('cancelled', 'cancelled', '');
    const { plan, wb } = this;
    if (plan.sandboxes.length && plan.phase === 'execute' && plan.state === 'processing')
      await wb.checkpoint(plan, state, plan.cursor).catch(() => undefined);
    await this.closeText().catch(() => undefined);
    await this.keepTranscript().catch(() => undefined);
    this.tick();
    return wb.fail(plan, this.turn, 'execute', error, state);
  }
}
