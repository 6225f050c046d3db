/**
 * The strategize phase of a plan from a goal: the strategy actor reads (only read-only tools, in the
 * project's directory, and the context the context service assembles for the `strategize` view) and
 * answers with a decision tree through the `submit_strategy` tool — the approach, then each decision
 * with the question, the option chosen, the alternatives it weighed, a confidence and a rationale.
 * The answer is validated against the schema; an answer off the schema is sent back with the
 * problems (bounded), then the phase errors with a hint. Each decision keeps a reference to the
 * context snapshot the actor saw. A correction re-plans from a decision with the user's guidance:
 * the decisions before it are given as settled, the actor decides the rest again.
 */
import type { Decision, Plan } from '../../../domain/plan/plan.ts';
import { budgetExceeded, completePhase, startPhase } from '../../../domain/plan/plan.ts';
import type { ActorDefinition, ResourceDefinition, ToolDefinition } from '../../../domain/registry/entities.ts';
import { fallbacksOf } from '../../../domain/registry/fallbacks.ts';
import {
  fragmentsText,
  snapshotRef,
  type AssembledContext,
  type ContextSnapshotRef,
} from '../../context/context.types.ts';
import type { ModelMessage, ModelTool, ModelToolResult } from '../../ports/language-model.port.ts';
import type { SandboxInfo } from '../../ports/sandbox.port.ts';
import { parseArgs, resultForModel } from '../../actors/llm/tool-args.ts';
import { argSummary, normalizeArgs } from '../tool-call-preview.ts';
import type { PlanWorkbench, TaskHandle } from '../plan-workbench.ts';
import { PlanActorFailure, PlanModel, planToolsOf, type PlanLlmDeps } from './plan-model.ts';
import { goalBrief } from './plan-prompt.ts';

/** Answers off the schema sent back to the actor before the phase gives up. */
export const MAX_STRATEGY_RETRIES = 2;
/** Decisions a strategy may have. */
const MAX_DECISIONS = 20;

const Alternative = {
  type: 'object',
  properties: {
    option: { type: 'string', minLength: 1, maxLength: 2000 },
    reason: { type: 'string', minLength: 1, maxLength: 4000, description: 'why it was not chosen' },
  },
  required: ['option', 'reason'],
  additionalProperties: false,
};
const Confidence = { type: 'number', minimum: 0, maximum: 1 };

/** The structured answer of a strategy actor. */
export const STRATEGY_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    approach: { type: 'string', minLength: 1, maxLength: 4000, description: 'how the goal will be reached' },
    rationale: { type: 'string', minLength: 1, maxLength: 8000 },
    confidence: Confidence,
    alternatives: { type: 'array', maxItems: 10, items: Alternative, description: 'other approaches weighed' },
    decisions: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_DECISIONS,
      description: 'the decisions the approach takes, in the order the work follows them',
      items: {
        type: 'object',
        properties: {
          question: { type: 'string', minLength: 1, maxLength: 2000 },
          chosen: { type: 'string', minLength: 1, maxLength: 4000 },
          alternatives: { type: 'array', maxItems: 10, items: Alternative },
          confidence: Confidence,
          rationale: { type: 'string', minLength: 1, maxLength: 8000 },
        },
        required: ['question', 'chosen', 'alternatives', 'confidence', 'rationale'],
        additionalProperties: false,
      },
    },
  },
  required: ['approach', 'rationale', 'confidence', 'decisions'],
  additionalProperties: false,
};

interface StrategyAnswer {
  approach: string;
  rationale: string;
  confidence: number;
  alternatives?: Array<{ option: string; reason: string }>;
  decisions: Array<{
    question: string;
    chosen: string;
    alternatives: Array<{ option: string; reason: string }>;
    confidence: number;
    rationale: string;
  }>;
}

const SUBMIT: ModelTool = {
  name: 'submit_strategy',
  description:
    'Submit the strategy: the approach and the decisions it takes, each with the alternatives you weighed. Call it once, when you are done reading.',
  inputSchema: STRATEGY_SCHEMA,
};

/** Where a re-plan starts: the decision corrected (and everything after it), with the user's guidance. */
export interface Replan {
  /** The settled decisions (kept), in order. */
  kept: Decision[];
  /** The index the new decisions start at. */
  fromIndex: number;
  guidance: string;
  /** The decision the guidance corrects (absent: guidance after a failed strategize). */
  corrected?: Decision | undefined;
}

/**
 * Runs the strategy actor and records its decisions (all of them, or — re-planning — those from
 * `replan.fromIndex` on). Returns the decisions it recorded.
 */
export async function strategizeWithActor(
  wb: PlanWorkbench,
  plan: Plan,
  turn: TaskHandle | undefined,
  signal: AbortSignal,
  replan?: Replan,
): Promise<Decision[]> {
  const llm = wb.deps.llm;
  const actors = plan.actors;
  if (!llm || !actors)
    return wb.fail(plan, turn, 'strategize', {
      kind: 'actor',
      message: 'this agent runs no LLM actors, so it cannot strategize a plan from a goal',
      recoverable: false,
    });
  startPhase(plan, 'strategize');
  if (turn) plan.tasks.strategize = turn.task.id;
  await wb.save(plan);
  await turn?.status('TASK_STATE_WORKING', `Strategizing with ${actors.strategy}: ${plan.description}`, wb.meta(plan));
  try {
    const answer = await new StrategyRun(wb, llm, plan, turn, signal, replan).run();
    if (!answer) return [];
    const made = await recordStrategy(wb, plan, answer.answer, answer.context, replan);
    for (const d of made)
      await turn?.artifact(
        { artifactId: 'decisions', name: 'decisions', parts: [{ data: d, mediaType: 'application/json' }] },
        { append: true },
      );
    const all = (await wb.deps.plans.decisions(plan.id)).filter((d) => d.type === 'choice' && !d.superseded);
    plan.stepsTotal = all.length;
    completePhase(plan);
    await wb.save(plan);
    await turn?.status(
      'TASK_STATE_COMPLETED',
      `Strategy ready: ${all.length} decision${all.length === 1 ? '' : 's'} (${actors.strategy}). Next: agents plan tree ${plan.id}, agents plan execute ${plan.id}`,
      wb.meta(plan),
    );
    return made;
  } catch (err) {
    if (err instanceof PlanActorFailure)
      return wb.fail(plan, turn, 'strategize', err.error, err.error.kind === 'budget' ? 'constrained' : 'errored');
    throw err;
  }
}

/** The decisions of an answer: a new root (unless re-planning below it) and one choice per decision. */
async function recordStrategy(
  wb: PlanWorkbench,
  plan: Plan,
  a: StrategyAnswer,
  context: ContextSnapshotRef,
  replan: Replan | undefined,
): Promise<Decision[]> {
  const made: Decision[] = [];
  const existingRoot = replan?.kept.find((d) => d.type === 'strategy');
  const guided = replan
    ? { guidance: replan.guidance, ...(replan.corrected ? { corrects: replan.corrected.id } : {}) }
    : {};
  const root =
    existingRoot ??
    (await wb.record(plan, {
      type: 'strategy',
      question: `How to reach: ${plan.definitionOfDone}`,
      chosen: a.approach,
      alternatives: a.alternatives ?? [],
      confidence: a.confidence,
      rationale: a.rationale,
      context: { snapshot: context, actor: plan.actors?.strategy, ...guided },
    }));
  if (!existingRoot) made.push(root);
  const from = replan?.fromIndex ?? 0;
  // A model that repeats the decisions that stand (asked for the new ones only) does not duplicate them.
  const standing = new Set(
    (replan?.kept ?? []).filter((d) => d.type === 'choice').map((d) => `${d.question}\n${chosenOf(d)}`),
  );
  const fresh = a.decisions.filter((d) => !standing.has(`${d.question}\n${d.chosen}`));
  for (const [i, d] of fresh.entries()) {
    made.push(
      await wb.record(plan, {
        type: 'choice',
        parentId: root.id,
        stepIndex: from + i,
        question: d.question,
        chosen: d.chosen,
        alternatives: d.alternatives,
        confidence: d.confidence,
        rationale: d.rationale,
        context: { snapshot: context, actor: plan.actors?.strategy, ...guided },
      }),
    );
  }
  return made;
}

class StrategyRun {
  private model!: PlanModel;
  private readonly messages: ModelMessage[] = [];

  private readonly wb: PlanWorkbench;
  private readonly llm: PlanLlmDeps;
  private readonly plan: Plan;
  private readonly turn: TaskHandle | undefined;
  private readonly signal: AbortSignal;
  private readonly replan: Replan | undefined;

  constructor(
    wb: PlanWorkbench,
    llm: PlanLlmDeps,
    plan: Plan,
    turn: TaskHandle | undefined,
    signal: AbortSignal,
    replan: Replan | undefined,
  ) {
    this.wb = wb;
    this.llm = llm;
    this.plan = plan;
    this.turn = turn;
    this.signal = signal;
    this.replan = replan;
  }

  async run(): Promise<{ answer: StrategyAnswer; context: ContextSnapshotRef } | undefined> {
    const { wb, plan } = this;
    const actorName = plan.actors?.strategy ?? '';
    this.model = await PlanModel.open(
      actorName,
      async (n) => (await wb.deps.registry.use('actor', n))?.definition as ActorDefinition | undefined,
      this.llm,
      {
        report: async (fallbacks, text) =>
          this.turn?.status('TASK_STATE_WORKING', text, { ...wb.meta(plan), taskMetadata: { fallbacks } }),
        earlier: fallbacksOf(this.turn?.task.metadata),
      },
    );
    const tools = await planToolsOf(
      this.model.def,
      async (n) => (await wb.deps.registry.use('tool', n))?.definition as ToolDefinition | undefined,
      true,
    );
    const where = await this.readRoot();
    const context = await this.context();
    const system = [
      `You are the strategy actor of a plan. You decide how the goal will be reached; an execution actor will carry out your strategy in a sandbox. You may only read: the tools you have do not change anything.`,
      goalBrief(plan),
      where
        ? `File paths are relative to the root of the resource ${where.resource}.`
        : 'The project has no directory to read.',
      contextText(context),
      tools.problems.length ? `Not available: ${tools.problems.join('; ')}.` : '',
      `When you know your strategy, call submit_strategy once with the approach and its decisions (each with the question it answers, the option chosen, the alternatives you weighed and why not, a confidence from 0 to 1 and a rationale).`,
    ]
      .filter((s) => s !== '')
      .join('\n\n');
    this.messages.push({ role: 'user', text: this.request() });
    const offered = [...tools.offered, SUBMIT];
    const maxSteps = this.model.def.maxToolSteps ?? 20;
    let offSchema = 0;
    for (let step = 0; ; step++) {
      const over = budgetExceeded(plan);
      if (over) throw new PlanActorFailure(over);
      if (step >= maxSteps)
        throw new PlanActorFailure({
          kind: 'strategy',
          message: `${actorName} read for ${maxSteps} model steps without submitting a strategy (maxToolSteps)`,
          recoverable: true,
          hint: `raise maxToolSteps of ${actorName}, or give guidance: agents plan prompt ${plan.id} "…"`,
        });
      const r = await this.model.step(plan, { system, messages: this.messages, tools: offered, signal: this.signal });
      await wb.save(plan);
      this.messages.push({ role: 'assistant', text: r.text, ...(r.calls.length ? { toolCalls: r.calls } : {}) });
      const submit = r.calls.find((c) => c.name === SUBMIT.name);
      let problems: string[];
      if (submit) {
        const args = parseArgs(submit.arguments);
        problems = args.ok ? this.model.validate(STRATEGY_SCHEMA, args.value) : [`not JSON: ${args.problem}`];
        if (problems.length === 0 && args.ok)
          return { answer: args.value as unknown as StrategyAnswer, context: snapshotRef(context) };
      } else if (r.calls.length === 0) {
        // An answer in words: a JSON strategy in the text counts; anything else is off the schema.
        const json = jsonIn(r.text);
        problems = json === undefined ? ['no strategy submitted'] : this.model.validate(STRATEGY_SCHEMA, json);
        if (json !== undefined && problems.length === 0)
          return { answer: json as StrategyAnswer, context: snapshotRef(context) };
      } else {
        problems = [];
      }
      const results: ModelToolResult[] = [];
      for (const call of r.calls) {
        if (call.name === SUBMIT.name) {
          results.push({
            id: call.id,
            name: call.name,
            output: `The strategy does not follow the schema: ${problems.slice(0, 10).join('; ')}. Call submit_strategy again with a corrected strategy.`,
            isError: true,
          });
          continue;
        }
        results.push(await this.readTool(call, tools.byModelName, where));
      }
      if (problems.length > 0) {
        offSchema++;
        if (offSchema > MAX_STRATEGY_RETRIES)
          throw new PlanActorFailure({
            kind: 'strategy',
            message: `${actorName} answered off the strategy schema ${offSchema} times; the last problems: ${problems.slice(0, 5).join('; ')}`,
            recoverable: true,
            hint: `try a model that follows structured output better (make a new plan with --strategy-actor NAME), or give guidance: agents plan prompt ${plan.id} "…"`,
          });
        await this.turn?.status(
          'TASK_STATE_WORKING',
          `The strategy was off the schema (${problems.slice(0, 3).join('; ')}); asking again`,
          wb.meta(plan),
        );
        if (r.calls.length === 0)
          this.messages.push({
            role: 'user',
            text: `Your answer is not a strategy (${problems.slice(0, 10).join('; ')}). Call the submit_strategy tool with the approach and its decisions.`,
          });
      }
      if (results.length > 0) this.messages.push({ role: 'tool', results });
    }
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
    const [first] = await this.wb.resources(this.plan);
    if (!first) return undefined;
    const r: ResourceDefinition = first;
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
        message: `the context of project ${project} could not be assembled: ${(err as Error).message}`,
        recoverable: true,
        hint: `see agents project context inspect ${project} --plan ${this.plan.id}`,
      });
    }
  }

  private async readTool(
    call: { id: string; name: string; arguments: string },
    byName: ReadonlyMap<string, { ref: string; def: ToolDefinition }>,
    where: SandboxInfo | undefined,
  ): Promise<ModelToolResult> {
    const tool = byName.get(call.name);
    const said = (output: string): ModelToolResult => ({ id: call.id, name: call.name, output, isError: true });
    if (!tool) return said(`There is no tool named ${call.name}; you may only read while strategizing.`);
    const args = parseArgs(call.arguments);
    if (!args.ok) return said(`The arguments are not valid JSON (${args.problem}).`);
    const problems = this.model.validate(tool.def.inputSchema, args.value);
    if (problems.length) return said(`The arguments do not match the tool's schema: ${problems.join('; ')}.`);
    if (!where) return said('There is no directory to read.');
    await this.turn?.status(
      'TASK_STATE_WORKING',
      `Reading: ${tool.ref} ${argSummary(args.value)}`,
      this.wb.meta(this.plan),
    );
    const r = await this.wb.deps.tools.run({
      tool: tool.def,
      args: normalizeArgs(tool.ref, args.value),
      sandbox: where,
      signal: this.signal,
      timeoutMs: this.wb.deps.commandTimeoutMs ?? 300_000,
      network: 'none',
    });
    return resultForModel(call, r);
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

/** A decision's choice in words (a stepped decision's tool call as JSON). */
function chosenOf(d: Decision): string {
  return typeof d.chosen === 'string' ? d.chosen : JSON.stringify(d.chosen);
}
