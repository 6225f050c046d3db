/**
 * The strategy actor's run, as a configuration of the agent loop: read-only tools in the project's
 * directory, the `submit_strategy` tool as its way to answer (validated against STRATEGY_SCHEMA; an
 * answer off the schema is sent back with its problems, MAX_STRATEGY_RETRIES times), the plan's
 * budgets, and a JSON strategy in plain words accepted too.
 */
import type { Plan } from '../../../domain/plan/plan.ts';
import type { ResourceDefinition } from '../../../domain/registry/resource.definition.ts';
import { fallbacksOf } from '../../../domain/registry/fallbacks.ts';
import {
  fragmentsText,
  snapshotRef,
  type AssembledContext,
  type ContextSnapshotRef,
} from '../../context/context.types.ts';
import type { ModelTool } from '../../ports/language-model.port.ts';
import type { SandboxInfo } from '../../ports/sandbox.port.ts';
import type { Transcript } from '../../ports/transcript.port.ts';
import { MAX_MALFORMED_STEPS, runAgentLoop } from '../../agent/agent-loop.ts';
import type { AgentConfig, AgentOutcome, AgentRecorder, AgentTool, ControlTool } from '../../agent/agent.types.ts';
import { argSummary } from '../tool-call-preview.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from '../plan.recorder.ts';
import { resourcesOf } from '../plan-definitions.ts';
import { PlanActorFailure, PlanModel, planToolsOf, type PlanLlmDeps } from './plan-model.ts';
import { planAgentTool } from './plan-agent.ts';
import { PlanBudget } from './plan-budget.ts';
import { goalBrief } from './plan.prompt.ts';
import {
  chosenOf,
  MAX_STRATEGY_RETRIES,
  STRATEGY_SCHEMA,
  type Replan,
  type StrategyAnswer,
} from './strategy-schema.ts';
import { messageOf } from '../../../domain/errors.ts';

const SUBMIT: ModelTool = {
  name: 'submit_strategy',
  description:
    'Submit the strategy: the approach and the decisions it takes, each with the alternatives you weighed. Call it once, when you are done reading.',
  inputSchema: STRATEGY_SCHEMA,
};

export class StrategyRun {
  private model!: PlanModel;
  private answer: StrategyAnswer | undefined;
  private offSchema = 0;

  private readonly io: PlanRunPorts;
  private readonly llm: PlanLlmDeps;
  private readonly plan: Plan;
  private readonly turn: TaskHandle | undefined;
  private readonly signal: AbortSignal;
  private readonly replan: Replan | undefined;

  constructor(
    io: PlanRunPorts,
    llm: PlanLlmDeps,
    plan: Plan,
    turn: TaskHandle | undefined,
    signal: AbortSignal,
    replan: Replan | undefined,
  ) {
    this.io = io;
    this.llm = llm;
    this.plan = plan;
    this.turn = turn;
    this.signal = signal;
    this.replan = replan;
  }

  async run(): Promise<{ answer: StrategyAnswer; context: ContextSnapshotRef } | undefined> {
    const { io, plan } = this;
    this.model = await this.openModel();
    const tools = await planToolsOf(this.model.def, async (n) => (await io.registry.use('tool', n))?.definition, true);
    const where = await this.readRoot();
    const context = await this.context();
    const system = this.system(where, context, tools.problems);
    const budget = new PlanBudget(
      plan,
      () => undefined,
      (u) => this.model.cost(u),
    );
    const read = where
      ? tools.tools.map((t) =>
          planAgentTool(t, {
            io,
            sandbox: where,
            network: 'none',
            timeoutMs: () => io.commandTimeoutMs ?? 300_000,
          }),
        )
      : [];
    const transcript: Transcript = {
      messages: [{ role: 'user', text: this.request() }],
      steps: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      toolCalls: 0,
    };
    for (;;) {
      const outcome = await runAgentLoop(this.loopConfig(system, read, budget), transcript);
      await io.recorder.save(plan);
      if (this.answer) return { answer: this.answer, context: snapshotRef(context) };
      const answer = await this.settle(outcome, budget, transcript);
      if (answer) return { answer, context: snapshotRef(context) };
    }
  }

  /** The strategy actor's model (with its fallbacks, reported on the task as they are used). */
  private openModel(): Promise<PlanModel> {
    const { io, plan } = this;
    return PlanModel.open(
      plan.actors?.strategy ?? '',
      async (n) => (await io.registry.use('actor', n))?.definition,
      this.llm,
      {
        report: async (fallbacks, text) =>
          this.turn?.status('TASK_STATE_WORKING', text, { ...planMeta(plan), taskMetadata: { fallbacks } }),
        earlier: fallbacksOf(this.turn?.task.metadata),
        spender: this.turn?.by,
      },
    );
  }

  /** The strategy actor's instructions: its role, the goal, where it reads, the context, and how to answer. */
  private system(where: SandboxInfo | undefined, context: AssembledContext, problems: string[]): string {
    return [
      `You are the strategy actor of a plan. You decide how the goal will be reached; an execution actor will carry out your strategy in a sandbox. You may only read: the tools you have do not change anything.`,
      goalBrief(this.plan),
      where
        ? `File paths are relative to the root of the resource ${where.resource}.`
        : 'The project has no directory to read.',
      contextText(context),
      problems.length ? `Not available: ${problems.join('; ')}.` : '',
      `When you know your strategy, call submit_strategy once with the approach and its decisions (each with the question it answers, the option chosen, the alternatives you weighed and why not, a confidence from 0 to 1 and a rationale).`,
    ]
      .filter((s) => s !== '')
      .join('\n\n');
  }

  /** The agent loop as the strategy actor runs it: read-only tools, every call allowed, submit_strategy to end. */
  private loopConfig(system: string, read: AgentTool[], budget: PlanBudget): AgentConfig {
    return {
      model: this.model.agentModel(),
      tracer: this.model.tracer,
      system,
      tools: read,
      control: [this.submitTool()],
      decide: () => ({ decision: 'allow', profile: 'strategize', reason: 'reading while strategizing' }),
      approvals: { always: () => [], remember: () => Promise.resolve(), ask: () => Promise.resolve() },
      recorder: this.recorder(),
      budget,
      validate: (schema, value) => this.model.validate(schema, value),
      signal: this.signal,
      maxSteps: this.model.def.maxToolSteps ?? 20,
      window: {
        contextWindow: this.model.contextWindow,
        reserve: Math.min(this.model.maxTokens, Math.floor(this.model.contextWindow / 2)),
      },
      onText: () => Promise.resolve(),
      save: () => Promise.resolve(),
    };
  }

  /**
   * What a loop that ended without a submitted strategy comes to: a strategy in the answer's text;
   * undefined to ask again (off the schema, stopped); or a PlanActorFailure, thrown.
   */
  private async settle(
    outcome: AgentOutcome,
    budget: PlanBudget,
    transcript: Transcript,
  ): Promise<StrategyAnswer | undefined> {
    const actorName = this.plan.actors?.strategy ?? '';
    const fail = (message: string, hint: string): never => {
      throw new PlanActorFailure({ kind: 'strategy', message, recoverable: true, hint });
    };
    const guide = `give guidance: agents plan prompt ${this.plan.id} "…"`;
    switch (outcome.kind) {
      case 'answered':
      case 'step-limit': {
        // An answer in words: a JSON strategy in the text counts; anything else is off the schema.
        const json = jsonIn(outcome.text);
        const problems = json === undefined ? ['no strategy submitted'] : this.model.validate(STRATEGY_SCHEMA, json);
        if (problems.length === 0) return json as StrategyAnswer;
        if (outcome.kind === 'step-limit')
          return fail(
            `${actorName} read for ${this.model.def.maxToolSteps ?? 20} model steps without submitting a strategy (maxToolSteps)`,
            `raise maxToolSteps of ${actorName}, or ${guide}`,
          );
        await this.offTheSchema(problems);
        transcript.messages.push({
          role: 'user',
          text: `Your answer is not a strategy (${problems.slice(0, 10).join('; ')}). Call the submit_strategy tool with the approach and its decisions.`,
        });
        return undefined;
      }
      case 'budget':
        throw new PlanActorFailure(
          budget.error ?? { kind: 'budget', message: outcome.stop.message, recoverable: true },
        );
      case 'invalid-calls':
        return fail(
          `${actorName} made only invalid tool calls ${MAX_MALFORMED_STEPS} steps in a row; the last: ${outcome.last}`,
          `try a model that handles tools better (make a new plan with --strategy-actor NAME), or ${guide}`,
        );
      case 'window':
        return fail(
          `what ${actorName} read no longer fits its context window (${outcome.room} tokens after ${outcome.reserve} reserved for the answer)`,
          `raise contextWindow of ${actorName} if the model has a larger window, or ${guide}`,
        );
      case 'stopped':
      case 'waiting':
        return undefined;
    }
  }

  /** `submit_strategy`: a valid strategy ends the run; one off the schema goes back with its problems. */
  private submitTool(): ControlTool {
    return {
      tool: SUBMIT,
      handle: async (args) => {
        const problems = args.ok ? this.model.validate(STRATEGY_SCHEMA, args.value) : [`not JSON: ${args.problem}`];
        if (args.ok && problems.length === 0) {
          this.answer = args.value as unknown as StrategyAnswer;
          return { output: 'Strategy received.', isError: false, stop: true };
        }
        await this.offTheSchema(problems);
        return {
          output: `The strategy does not follow the schema: ${problems.slice(0, 10).join('; ')}. Call submit_strategy again with a corrected strategy.`,
          isError: true,
        };
      },
    };
  }

  /** One more answer off the schema: told in a status line, or — past the retries — the phase fails. */
  private async offTheSchema(problems: string[]): Promise<void> {
    this.offSchema++;
    if (this.offSchema > MAX_STRATEGY_RETRIES) {
      const actorName = this.plan.actors?.strategy ?? '';
      throw new PlanActorFailure({
        kind: 'strategy',
        message: `${actorName} answered off the strategy schema ${this.offSchema} times; the last problems: ${problems.slice(0, 5).join('; ')}`,
        recoverable: true,
        hint: `try a model that follows structured output better (make a new plan with --strategy-actor NAME), or give guidance: agents plan prompt ${this.plan.id} "…"`,
      });
    }
    await this.turn?.status(
      'TASK_STATE_WORKING',
      `The strategy was off the schema (${problems.slice(0, 3).join('; ')}); asking again`,
      planMeta(this.plan),
    );
  }

  /** Reading is shown as a status line; nothing else of it is recorded. */
  private recorder(): AgentRecorder {
    return {
      notRun: () => Promise.resolve(),
      started: async (e) => {
        await this.turn?.status(
          'TASK_STATE_WORKING',
          `Reading: ${e.ref} ${argSummary(e.args as Record<string, unknown>)}`,
          planMeta(this.plan),
        );
        return undefined;
      },
      finished: () => Promise.resolve(),
    };
  }

  /** What the actor is asked: the goal, or — re-planning — the correction. */
  private request(): string {
    const r = this.replan;
    if (!r) return `Plan how to reach this goal: ${this.plan.description}`;
    const kept = r.kept.filter((d) => d.type === 'choice');
    return [
      r.corrected
        ? `The user corrected your strategy for: ${this.plan.description}`
        : `Plan how to reach this goal: ${this.plan.description}`,
      r.corrected ? `The decision corrected: ${r.corrected.question} → ${chosenOf(r.corrected)}` : '',
      `The user's guidance: ${r.guidance}`,
      kept.length
        ? `These decisions stand (do not repeat them):\n${kept.map((d, i) => `${i + 1}. ${d.question} → ${chosenOf(d)}`).join('\n')}`
        : '',
      r.corrected
        ? `Decide again from the corrected decision on, following the guidance, and submit only the new decisions.`
        : `Follow the guidance.`,
    ]
      .filter((s) => s !== '')
      .join('\n\n');
  }

  /** The directory read-only tools read: the first resource's (strategize runs before any sandbox). */
  private async readRoot(): Promise<SandboxInfo | undefined> {
    const [first] = await resourcesOf(this.io.registry, this.plan);
    if (!first) return undefined;
    const r: ResourceDefinition = first;
    // A git-remote's files are in the plan's sandbox only (cloned there when the plan executes).
    if (r.type === 'git-remote') return undefined;
    return { resource: r.name, kind: 'git-worktree', root: r.path, source: r.path, baseCommit: 'HEAD' };
  }

  private async context(): Promise<AssembledContext> {
    const decisions = (this.replan?.kept ?? []).map((d) => `${d.question} ${chosenOf(d)}`);
    if (this.replan) decisions.push(this.replan.guidance);
    const project = this.plan.projects[0] ?? '';
    try {
      return await this.llm.context.assemble({
        project,
        view: 'strategize',
        goal: this.plan.description,
        action: this.plan.action,
        decisions,
        modelWindow: this.model.contextWindow,
        answerReserve: this.model.maxTokens,
        signal: this.signal,
      });
    } catch (err) {
      if (this.signal.aborted) throw err;
      throw new PlanActorFailure({
        kind: 'internal',
        message: `the context of project ${project} could not be assembled: ${messageOf(err)}`,
        recoverable: true,
        hint: `see agents project context inspect ${project} --plan ${this.plan.id}`,
      });
    }
  }
}

/** The context as the strategy actor reads it. */
function contextText(c: AssembledContext): string {
  const none = c.fragments.length === 0 ? `The context service selected no files of project ${c.project}.` : '';
  return [fragmentsText(c, 'for you'), none].filter((p) => p !== '').join('\n\n');
}

/** A JSON object in a text answer (bare, or in a ```json fence). */
function jsonIn(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1];
  const candidate = (fenced ?? text).trim();
  if (!candidate.startsWith('{')) return undefined;
  try {
    return JSON.parse(candidate) as unknown;
  } catch {
    return undefined;
  }
}
