/**
 * The agent loop: the one tool-calling loop behind a chat turn, a plan's strategize phase and its
 * execute phase. Each step streams the model's answer (a budget that runs out mid-stream aborts the
 * request at once), then settles its tool calls in order: an unknown tool, arguments that are not
 * JSON or not the tool's schema are told to the model; the policy denies, allows or asks (an
 * "always" answer or `yes` counts as asked); before-hooks may veto; the call runs, is recorded and
 * its result fed back. The first call that needs a person saves the transcript and ends the loop
 * `waiting`; an answer resumes it where it stopped. At maxSteps the model gets one last step without
 * tools to say what it did and what is left. Configurations differ only in their ports (agent.types.ts).
 */
import type { PolicyVerdict } from '../../domain/plan/policy.ts';
import { vetoText } from '../hooks/hook.service.ts';
import {
  ProviderFailure,
  type ModelMessage,
  type ModelTool,
  type ModelToolCall,
  type ModelToolResult,
} from '../ports/language-model.port.ts';
import type { Transcript } from '../ports/transcript.port.ts';
import { NO_TRACER, traced, type SpanOptions, type Tracer } from '../ports/tracer.port.ts';
import { fitToWindow, MessageTokens } from '../actors/llm/history.ts';
import { parseArgs, resultForModel } from '../actors/llm/tool-args.ts';
import { alwaysMatches, ruleOf } from './always.rules.ts';
import { streamStep, type StepResult } from './agent-step.ts';
import type { AgentConfig, AgentOutcome, AgentTool, ToolOutcome } from './agent.types.ts';
import { messageOf } from '../../domain/errors.ts';

/** Steps in a row whose every call was refused before the loop gives up. */
export const MAX_MALFORMED_STEPS = 3;

/** What the model is told when it has used its steps (its last step has no tools). */
export function stepLimitNote(maxSteps: number): string {
  return `You have used all ${maxSteps} tool steps allowed for this work (maxToolSteps), so no more tools will run. Without calling any tool, say briefly what you did, what is left to do, and how to go on.`;
}

/** Runs the loop on `transcript` (new, or a saved one to go on with) until it ends; mutates it. */
export async function runAgentLoop(cfg: AgentConfig, transcript: Transcript): Promise<AgentOutcome> {
  return new AgentLoop(cfg, transcript).run();
}

class AgentLoop {
  private readonly byName: ReadonlyMap<string, AgentTool>;
  private readonly offered: ModelTool[];
  private readonly tokens: MessageTokens;
  private readonly tracer: Tracer;

  private readonly cfg: AgentConfig;
  private readonly t: Transcript;

  constructor(cfg: AgentConfig, t: Transcript) {
    this.cfg = cfg;
    this.t = t;
    this.byName = new Map(cfg.tools.map((x) => [x.modelName, x]));
    this.offered = [
      ...cfg.tools.map((x) => ({ name: x.modelName, description: x.description, inputSchema: x.inputSchema })),
      ...(cfg.control ?? []).map((c) => c.tool),
    ];
    this.tokens = new MessageTokens({ count: (s) => cfg.model.count(s) });
    this.tracer = cfg.tracer ?? NO_TRACER;
  }

  async run(): Promise<AgentOutcome> {
    const { cfg, t } = this;
    const { contextWindow, reserve } = cfg.window;
    const room = contextWindow - reserve;
    const fixed = (cfg.system ? await cfg.model.count(cfg.system) : 0) + (await this.tokens.ofTools(this.offered));
    for (;;) {
      if (t.pending) {
        const ended = await this.settle();
        if (ended) return ended;
      }
      if (t.ending) {
        t.ending = undefined;
        return { kind: 'stopped' };
      }
      const over = cfg.budget.beforeStep?.();
      if (over) return { kind: 'budget', stop: over, partial: '' };
      const last = t.steps >= cfg.maxSteps;
      if (last) t.messages.push({ role: 'user', text: stepLimitNote(cfg.maxSteps) });
      const fitted = await fitToWindow(this.tokens, room, fixed, cfg.window.history ?? [], t.messages);
      if (!fitted) return { kind: 'window', room, reserve, window: contextWindow };
      const step = await this.step(fitted.messages, fitted.promptTokens, last);
      t.steps++;
      t.messages.push({
        role: 'assistant',
        text: step.text,
        ...(step.calls.length && !last ? { toolCalls: step.calls } : {}),
      });
      if (step.stop) return { kind: 'budget', stop: step.stop, partial: step.text };
      if (last) return { kind: 'step-limit', text: step.text, steps: t.steps };
      if (step.calls.length === 0) return { kind: 'answered', text: step.text, reason: step.reason };
      t.pending = { calls: step.calls, results: [], next: 0 };
    }
  }

  /** One model step, streamed; its usage added to the transcript's and the budget's. */
  private async step(messages: ModelMessage[], promptTokens: number, last: boolean): Promise<StepResult> {
    const { cfg, t } = this;
    const stepIndex = t.steps;
    // The OpenTelemetry GenAI conventions: a `chat {model}` client span per model call.
    const { model } = cfg;
    const modelName = model.modelId ?? model.name;
    const r = await traced(
      this.tracer,
      `chat ${modelName}`,
      {
        kind: 'client',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': model.provider,
          'gen_ai.request.model': modelName,
          'gen_ai.agent.name': model.name,
        },
      },
      async (span) => {
        const res = await this.streamStep(messages, promptTokens, last, stepIndex);
        span.setAttributes({
          'gen_ai.usage.input_tokens': res.usage.inputTokens,
          'gen_ai.usage.output_tokens': res.usage.outputTokens,
          'gen_ai.response.finish_reasons': [res.reason],
        });
        return res;
      },
    );
    t.usage.inputTokens += r.usage.inputTokens;
    t.usage.outputTokens += r.usage.outputTokens;
    if (r.usage.cacheReadTokens) t.usage.cacheReadTokens = (t.usage.cacheReadTokens ?? 0) + r.usage.cacheReadTokens;
    if (r.usage.cacheWriteTokens) t.usage.cacheWriteTokens = (t.usage.cacheWriteTokens ?? 0) + r.usage.cacheWriteTokens;
    return r;
  }

  private streamStep(
    messages: ModelMessage[],
    promptTokens: number,
    last: boolean,
    stepIndex: number,
  ): Promise<StepResult> {
    const { cfg } = this;
    return streamStep({
      model: cfg.model,
      request: {
        system: cfg.system || undefined,
        messages,
        tools: this.offered,
        stableMessages: messages.length,
        ...(last ? { toolChoice: 'none' as const } : {}),
      },
      promptTokens,
      budget: cfg.budget,
      signal: cfg.signal,
      onText: (delta) => cfg.onText(delta, stepIndex),
    });
  }

  /**
   * Settles the pending calls in order; the first that needs a person ends the loop `waiting`.
   * When all are settled their results join the transcript (undefined: go on).
   */
  private async settle(): Promise<AgentOutcome | undefined> {
    const { t, cfg } = this;
    const pending = t.pending;
    if (!pending) return undefined;
    let refused = 0;
    for (; pending.next < pending.calls.length; pending.next++) {
      if (cfg.signal.aborted) throw cancelled();
      const call = pending.calls[pending.next] as ModelToolCall;
      const r = await this.settleOne(call);
      if ('kind' in r) return r;
      if (r.refused) refused++;
      pending.results.push(r.result);
    }
    // Every call of this step was refused: the model may be stuck writing bad calls.
    t.malformedSteps = refused === pending.calls.length ? (t.malformedSteps ?? 0) + 1 : 0;
    t.messages.push({ role: 'tool', results: pending.results });
    t.pending = undefined;
    if (t.malformedSteps >= MAX_MALFORMED_STEPS)
      return { kind: 'invalid-calls', last: pending.results.at(-1)?.output ?? '', steps: t.steps };
    return undefined;
  }

  private async settleOne(call: ModelToolCall): Promise<AgentOutcome | Settled> {
    const { cfg } = this;
    const args = parseArgs(call.arguments);
    const control = cfg.control?.find((c) => c.tool.name === call.name);
    if (control) {
      const h = await control.handle(args.ok ? { ok: true, value: args.value } : { ok: false, problem: args.problem });
      if (h.stop) this.t.ending = true;
      return { result: told(call, h.output, h.isError), refused: h.isError };
    }
    const admitted = await this.admit(call, args);
    if ('result' in admitted) return admitted;
    return this.decide(call, admitted.tool, admitted.args, admitted.normalized);
  }

  /**
   * The call names an offered tool, with JSON arguments that its schema accepts and its normalizer
   * reads; otherwise it is refused, recorded as invalid, and the model is told why.
   */
  private async admit(
    call: ModelToolCall,
    args: ReturnType<typeof parseArgs>,
  ): Promise<
    | { tool: AgentTool; args: Record<string, unknown>; normalized: Record<string, unknown> }
    | (Settled & { refused: true })
  > {
    const { cfg } = this;
    const tool = this.byName.get(call.name);
    const refuse = async (output: string, value: unknown, summary = output): Promise<Settled & { refused: true }> => {
      await cfg.recorder.notRun({
        call,
        ref: tool?.ref ?? call.name,
        tool,
        args: value,
        state: 'invalid',
        summary,
        told: output,
      });
      return { result: told(call, output), refused: true };
    };
    if (!tool) {
      const names = [...this.offered.map((o) => o.name)].join(', ') || 'none';
      return refuse(`There is no tool named ${call.name}. Tools you can call: ${names}.`, args.value);
    }
    if (!args.ok)
      return refuse(
        `The arguments are not valid JSON (${args.problem}); call ${call.name} again with a JSON object.`,
        call.arguments,
        args.problem,
      );
    const problems = cfg.validate(tool.inputSchema, args.value);
    if (problems.length > 0)
      return refuse(
        `The arguments do not match the tool's input schema: ${problems.slice(0, 10).join('; ')}.`,
        args.value,
        problems.slice(0, 3).join('; '),
      );
    try {
      return { tool, args: args.value, normalized: tool.normalize ? tool.normalize(args.value) : args.value };
    } catch (err) {
      return refuse(`The command line cannot be read: ${messageOf(err)}.`, args.value);
    }
  }

  /**
   * An admitted call against the policy and the user's answer: denied, declined, over budget, asked
   * (the loop then waits, its transcript saved) or run.
   */
  private async decide(
    call: ModelToolCall,
    tool: AgentTool,
    args: Record<string, unknown>,
    normalized: Record<string, unknown>,
  ): Promise<AgentOutcome | Settled> {
    const { cfg } = this;
    const verdict = cfg.decide(tool, normalized);
    const event = { call, ref: tool.ref, tool, args, verdict };
    if (verdict.decision === 'deny') {
      await cfg.recorder.notRun({ ...event, state: 'denied', summary: verdict.reason });
      const by = cfg.policyName ? ` by ${cfg.policyName}` : '';
      return { result: told(call, `Not allowed${by}: ${verdict.reason}. Do not try this call again.`) };
    }
    const answer = cfg.answer?.callId === call.id ? cfg.answer.answer : undefined;
    if (answer?.decision === 'reject') {
      const g = answer.guidance;
      await cfg.recorder.notRun({ ...event, state: 'declined', summary: `declined by the user${g ? `: ${g}` : ''}` });
      return { result: told(call, `The user declined this call; it did not run.${g ? ` They said: ${g}` : ''}`) };
    }
    if (answer?.always) await cfg.approvals.remember(ruleOf(tool, answer.always, tool.commandOf(normalized)));
    const over = cfg.budget.beforeCall?.();
    if (over) return { kind: 'budget', stop: over, partial: '' };
    const allowed =
      cfg.approvals.yes ||
      answer !== undefined ||
      alwaysMatches(cfg.approvals.always(), tool.ref, tool.commandOf(normalized));
    if (verdict.decision === 'ask' && !allowed) {
      await cfg.save(this.t);
      const preview = (await tool.preview?.(normalized, cfg.signal).catch(() => ({}))) ?? {};
      await cfg.approvals.ask({ ...event, preview, verdict, problem: cfg.answerProblem });
      return { kind: 'waiting' };
    }
    return { result: await this.runTool(call, tool, args, normalized, event) };
  }

  private async runTool(
    call: ModelToolCall,
    tool: AgentTool,
    args: Record<string, unknown>,
    normalized: Record<string, unknown>,
    event: { call: ModelToolCall; ref: string; tool: AgentTool; args: unknown; verdict: PolicyVerdict },
  ): Promise<ModelToolResult> {
    const { cfg } = this;
    const veto = await cfg.hooks?.before(tool.ref, args);
    if (veto) {
      const text = vetoText(veto);
      await cfg.recorder.notRun({ ...event, state: 'vetoed', summary: text, hook: veto.hook });
      return { id: call.id, name: call.name, output: text, isError: true };
    }
    const writes = !tool.readOnly;
    if (writes && cfg.beforeWrite) {
      try {
        await cfg.beforeWrite();
      } catch (err) {
        if (cfg.signal.aborted) throw err;
        const text = `Not run: the state before it could not be recorded for undo (${messageOf(err)}).`;
        await cfg.recorder.notRun({ ...event, state: 'invalid', summary: text });
        return { id: call.id, name: call.name, output: text, isError: true };
      }
    }
    const handle = await cfg.recorder.started(event);
    const recorder = cfg.recorder;
    const t0 = Date.now();
    let outcome: ToolOutcome;
    try {
      outcome = await traced(this.tracer, `execute_tool ${tool.ref}`, toolSpan(call, tool), async (span) => {
        const o = await tool.run(normalized, {
          signal: cfg.signal,
          onOutput: recorder.output ? (chunk) => recorder.output?.(handle, chunk) : undefined,
        });
        if (!o.ok) span.recordError(new Error(o.summary));
        return o;
      });
    } catch (err) {
      if (cfg.signal.aborted) throw err;
      outcome = { ok: false, summary: `${tool.ref} failed: ${messageOf(err)}`, output: '' };
    }
    const durationMs = Date.now() - t0;
    if (cfg.signal.aborted) {
      await cfg.recorder.finished(
        { ...event, outcome: { ...outcome, ok: false, summary: 'cancelled' }, durationMs },
        handle,
      );
      throw cancelled();
    }
    this.t.toolCalls++;
    await cfg.recorder.finished({ ...event, outcome, durationMs }, handle);
    await cfg.hooks?.after(tool.ref, args, outcome);
    if (writes) await cfg.afterWrite?.();
    return resultForModel(call, outcome);
  }
}

/** The OpenTelemetry GenAI conventions' attributes of a tool call's span. */
function toolSpan(call: ModelToolCall, tool: AgentTool): SpanOptions {
  return {
    kind: 'internal',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.ref,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.type': 'function',
    },
  };
}

/** A settled call: the result the model is given, and whether the call was refused before it could run. */
type Settled = { result: ModelToolResult; refused?: boolean };

/** What the model is told of its call (an error unless said otherwise). */
function told(call: ModelToolCall, output: string, isError = true): ModelToolResult {
  return { id: call.id, name: call.name, output, isError };
}

function cancelled(): ProviderFailure {
  return new ProviderFailure('cancelled', 'cancelled', '');
}
