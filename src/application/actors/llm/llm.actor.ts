/**
 * An actor that thinks: an LLM behind a provider, with the tool-calling loop. One turn sends the
 * session's history (trimmed to the model's window) and the actor's tools, streams the answer as
 * `response` artifact chunks as tokens arrive, runs the tool calls the model makes (validated
 * against their schemas; read-only tools at once, the others as the automation profile decides —
 * asking through input-required), feeds the results back, and goes on up to maxToolSteps. Token
 * usage and cost are kept on the task. Cancelling the task aborts the request and the tool.
 */
import { textOf, type Message, type TaskState } from '../../../domain/a2a.model.ts';
import { parseApprovalAnswer, type ApprovalAnswer } from '../../../domain/plan/approval.ts';
import { decideToolCall, type PolicyVerdict } from '../../../domain/plan/policy.ts';
import { LLM_ACTOR_DEFAULTS, namesApiKey, type ActorDefinition } from '../../../domain/registry/entities.ts';
import { fallbacksOf } from '../../../domain/registry/fallbacks.ts';
import type { Session } from '../../../domain/session.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Actor, ActorTurn } from '../../ports/actor.port.ts';
import { vetoText, type HookService } from '../../hooks/hook.service.ts';
import { toolCallHooks, type ToolCallHooks } from '../../hooks/tool-call-hooks.ts';
import { fragmentsText, type ContextProvider } from '../../context/context.types.ts';
import {
  ProviderFailure,
  type ApiKeys,
  type LanguageModels,
  type ModelMessage,
  type ModelTool,
  type ModelToolCall,
  type ModelToolResult,
  type ModelUsage,
  type SchemaValidator,
  type TokenCounter,
} from '../../ports/language-model.port.ts';
import type { Logger } from '../../ports/logger.port.ts';
import type { StoredTask } from '../../ports/task.repository.port.ts';
import type { Transcript, TranscriptStore } from '../../ports/transcript.port.ts';
import { argSummary, previewOf } from '../../plans/tool-call-preview.ts';
import type { ChatTool, ChatToolbox, ChatToolSet } from './chat-toolbox.ts';
import { fitToWindow, MessageTokens } from './history.ts';
import { compactionSection, sessionHistory, type SessionHistory } from '../../sessions/compaction.ts';
import type { CompactionService } from '../../sessions/compaction.service.ts';
import { apiKeyFix } from './api-key-fix.ts';
import { ModelCandidates } from './model-candidates.ts';
import { costOf, parseArgs, resultForModel } from './tool-args.ts';

export interface LlmActorDeps {
  models: LanguageModels;
  keys: ApiKeys;
  tokens: TokenCounter;
  validator: SchemaValidator;
  toolbox: ChatToolbox;
  transcripts: TranscriptStore;
  /** The session's earlier turns. */
  turnsOf(contextId: string, limit: number): Promise<StoredTask[]>;
  session(id: string): Promise<Session | undefined>;
  logger: Logger;
  /** What a project-bound chat's actor sees of the project (the context service, view `default`). */
  context?: ContextProvider | undefined;
  /** Compacts the session's earlier turns when they near the window (absent: never). */
  compaction?: CompactionService | undefined;
  /** An actor's definition by name: the actor's `fallbacks` (absent: fallbacks are skipped as missing). */
  lookupActor?: ((name: string) => Promise<ActorDefinition | undefined>) | undefined;
  /** The hooks run before and after each tool call (absent: none). */
  hooks?: HookService | undefined;
}

/** Steps in a row whose every call was malformed before the turn gives up. */
export const MAX_MALFORMED_STEPS = 3;
/** Earlier turns read for the history (the window trims further). */
const HISTORY_TURNS = 200;

export class LlmActor implements Actor {
  readonly description: string;

  readonly name: string;
  private readonly def: ActorDefinition;
  private readonly deps: LlmActorDeps;

  constructor(name: string, def: ActorDefinition, deps: LlmActorDeps) {
    this.name = name;
    this.def = def;
    this.deps = deps;
    this.description = def.description ?? `${def.provider} model ${def.model}`;
  }

  async handle(turn: ActorTurn): Promise<void> {
    await new LlmTurn(this.name, this.def, this.deps, turn).run();
  }
}

/** Usage as kept on the task (`metadata.usage`). */
export interface TurnUsage {
  /** The actor whose model answered (a fallback's, after a fallback). */
  actor: string;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  steps: number;
  toolCalls: number;
  cost?: { amount: number; currency: string } | undefined;
}

class LlmTurn {
  private readonly tokens: MessageTokens;
  private readonly signal: AbortSignal;
  /** Empty until the turn knows what it goes on with (see transcriptOrNew). */
  private transcript: Transcript = { messages: [], steps: 0, usage: { inputTokens: 0, outputTokens: 0 }, toolCalls: 0 };
  private tools!: ChatToolSet;
  private apiKey: string | undefined;
  private responseOpen: boolean;
  private toolArtifacts = 0;
  private malformedSteps = 0;
  private project: string | undefined;
  private session: Session | undefined;
  /** The compaction whose summary this turn's prompt carries (`metadata.context.compaction`). */
  private compaction: SessionHistory['compaction'];
  /** The actor's model and its fallbacks (set once the key is known). */
  private candidates: ModelCandidates | undefined;
  private hooks: ToolCallHooks | undefined;

  private readonly actorName: string;
  private readonly def: ActorDefinition;
  private readonly deps: LlmActorDeps;
  private readonly turn: ActorTurn;

  constructor(actorName: string, def: ActorDefinition, deps: LlmActorDeps, turn: ActorTurn) {
    this.actorName = actorName;
    this.def = def;
    this.deps = deps;
    this.turn = turn;
    this.tokens = new MessageTokens(deps.tokens);
    this.signal = turn.signal;
    this.responseOpen = (turn.task.artifacts ?? []).some((a) => a.artifactId === 'response');
    this.toolArtifacts = (turn.task.artifacts ?? []).filter((a) => a.name === 'tool-call').length;
  }

  async run(): Promise<void> {
    try {
      await this.turn.status('TASK_STATE_WORKING');
      const key = await this.deps.keys.resolve(this.def);
      if (key.present) this.apiKey = key.key;
      if (key.present || !namesApiKey(this.def)) await this.openCandidates();
      else
        return await this.fail(
          `No API key for ${this.actorName}: ${key.problem}`,
          `${apiKeyFix(this.def, { server: true })}, then send again`,
          { kind: 'auth' },
        );
      const session = await this.deps.session(this.turn.task.contextId);
      this.session = session;
      this.project = session?.project;
      this.tools = await this.deps.toolbox.assemble(this.def, session, this.signal);
      this.hooks = toolCallHooks(this.deps.hooks, {
        task: this.turn.task,
        signal: this.signal,
        artifact: (a) => this.turn.artifact(a),
        owner: session?.owner ?? '',
        project: this.project,
        session: session?.id,
        workdir: this.tools.workspace?.root,
      });
      const earlier = await this.transcriptOrNew();
      if (earlier === 'answered') return;
      await this.loop();
    } catch (err) {
      if (this.signal.aborted) return;
      if (err instanceof ProviderFailure)
        return this.fail(err.message, err.hint, { kind: err.kind, ...(err.status ? { status: err.status } : {}) });
      throw err;
    }
  }

  /** The transcript to go on with: a new one, or (a follow-up) the task's own with the answer applied. */
  private async transcriptOrNew(): Promise<'go' | 'answered'> {
    const { task, message, isFollowUp } = this.turn;
    const stored = isFollowUp ? await this.deps.transcripts.get(task.id) : undefined;
    if (!stored) {
      this.transcript = {
        messages: [{ role: 'user', text: textOf(message.parts) }],
        steps: 0,
        usage: { inputTokens: 0, outputTokens: 0 },
        toolCalls: 0,
      };
      return 'go';
    }
    this.transcript = stored;
    if (!stored.pending) {
      stored.messages.push({ role: 'user', text: textOf(message.parts) });
      return 'go';
    }
    let answer: ApprovalAnswer;
    try {
      answer = parseApprovalAnswer(answerOf(message));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Not an answer: ask again, saying what an answer looks like.
      await this.askApproval(err.message);
      return 'answered';
    }
    const pending = stored.pending;
    const call = pending.calls[pending.next];
    if (call) {
      if (answer.decision === 'approve') {
        const tool = this.tools.byModelName.get(call.name);
        const args = parseArgs(call.arguments);
        pending.results.push(
          tool && args.ok
            ? await this.runTool(call, tool, args.value, undefined)
            : { id: call.id, name: call.name, output: 'the tool is no longer available', isError: true },
        );
      } else {
        const said = answer.guidance ? ` They said: ${answer.guidance}` : '';
        pending.results.push({
          id: call.id,
          name: call.name,
          output: `The user declined this call; it did not run.${said}`,
          isError: true,
        });
        await this.toolEvent(call, this.toolRef(call), parseArgs(call.arguments).value, {
          state: 'declined',
          ok: false,
          summary: `declined by the user${answer.guidance ? `: ${answer.guidance}` : ''}`,
        });
      }
      pending.next++;
    }
    return 'go';
  }

  private async loop(): Promise<void> {
    const maxSteps = this.def.maxToolSteps ?? LLM_ACTOR_DEFAULTS.maxToolSteps;
    const history = (await this.history()).turns.map((t) => t.messages).filter((m) => m.length > 0);
    const offered: ModelTool[] = this.tools.tools.map((t) => ({
      name: t.modelName,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
    const system = [this.systemPrompt(), this.compactionPrompt(), await this.projectContext()]
      .filter((p) => p !== '')
      .join('\n\n');
    const fixed = (system ? await this.deps.tokens.count(system) : 0) + (await this.tokens.ofTools(offered));
    const window = this.def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
    const reserve = Math.min(this.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens, Math.floor(window / 2));

    for (;;) {
      if (this.transcript.pending) {
        const waiting = await this.settleCalls();
        if (waiting) return;
      }
      if (this.transcript.steps >= maxSteps)
        return this.fail(
          `${this.actorName} stopped after ${maxSteps} model steps with tool calls still coming (maxToolSteps)`,
          `raise maxToolSteps of ${this.actorName}, or ask for something smaller`,
          { kind: 'tool-step-limit' },
        );
      const fitted = await fitToWindow(this.tokens, window - reserve, fixed, history, this.transcript.messages);
      if (!fitted)
        return this.fail(
          `This turn does not fit ${this.actorName}'s context window: its messages and tool results need more than the ${window - reserve} tokens left after ${reserve} reserved for the answer (contextWindow ${window})`,
          'raise contextWindow (if the model has a larger window), lower maxTokens, or start a new session',
          { kind: 'context-window' },
        );
      const step = await this.step(system, fitted.messages, offered);
      this.transcript.steps++;
      this.transcript.messages.push({
        role: 'assistant',
        text: step.text,
        ...(step.calls.length ? { toolCalls: step.calls } : {}),
      });
      if (step.calls.length === 0) {
        await this.saveTranscript();
        return this.complete(step.reason === 'length' ? 'length' : undefined);
      }
      this.transcript.pending = { calls: step.calls, results: [], next: 0 };
    }
  }

  /** One model step: text streamed out as it comes, the tool calls collected. */
  /** The transcript, once the task's row is stored (its foreign key; see ActorTurn.stored). */
  private async saveTranscript(): Promise<void> {
    await this.turn.stored();
    await this.deps.transcripts.save(this.turn.task.id, this.turn.task.contextId, this.transcript);
  }

  private async step(
    system: string,
    messages: ModelMessage[],
    tools: ModelTool[],
  ): Promise<{ text: string; calls: ModelToolCall[]; reason: string }> {
    let text = '';
    const calls: ModelToolCall[] = [];
    let reason = 'other';
    let usage: ModelUsage | undefined;
    const events = (this.candidates as ModelCandidates).stream({
      system: system || undefined,
      messages,
      tools,
      signal: this.signal,
    });
    for await (const ev of events) {
      if (ev.type === 'text') {
        if (ev.delta === '') continue;
        // A new step's words start on a new paragraph of the same answer.
        const delta = text === '' && this.responseOpen && this.transcript.steps > 0 ? `\n\n${ev.delta}` : ev.delta;
        text += ev.delta;
        await this.turn.artifact(
          { artifactId: 'response', name: 'response', parts: [{ text: delta }] },
          { append: this.responseOpen },
        );
        this.responseOpen = true;
      } else if (ev.type === 'tool-call') calls.push(ev.call);
      else {
        reason = ev.reason;
        usage = ev.usage;
      }
    }
    if (usage) {
      this.transcript.usage.inputTokens += usage.inputTokens;
      this.transcript.usage.outputTokens += usage.outputTokens;
    }
    return { text, calls, reason };
  }

  /**
   * Runs the pending calls in order: malformed or unknown ones are told to the model, denied ones
   * too; read-only and allowed ones run; the first that needs a person stops the turn in
   * input-required (true). When all are settled their results join the transcript.
   */
  private async settleCalls(): Promise<boolean> {
    const pending = this.transcript.pending;
    if (!pending) return false;
    let malformed = 0;
    for (; pending.next < pending.calls.length; pending.next++) {
      if (this.signal.aborted) throw new ProviderFailure('cancelled', 'cancelled', '');
      const call = pending.calls[pending.next] as ModelToolCall;
      const tool = this.tools.byModelName.get(call.name);
      const args = parseArgs(call.arguments);
      const refused = (output: string): void => {
        malformed++;
        pending.results.push({ id: call.id, name: call.name, output, isError: true });
      };
      if (!tool) {
        refused(
          `There is no tool named ${call.name}. Tools you can call: ${[...this.tools.byModelName.keys()].join(', ') || 'none'}.`,
        );
        continue;
      }
      if (!args.ok) {
        refused(`The arguments are not valid JSON (${args.problem}); call ${call.name} again with a JSON object.`);
        await this.toolEvent(call, tool.ref, call.arguments, { state: 'invalid', ok: false, summary: args.problem });
        continue;
      }
      const problems = this.deps.validator.validate(tool.inputSchema, args.value);
      if (problems.length > 0) {
        refused(`The arguments do not match the tool's input schema: ${problems.slice(0, 10).join('; ')}.`);
        await this.toolEvent(call, tool.ref, args.value, {
          state: 'invalid',
          ok: false,
          summary: problems.slice(0, 3).join('; '),
        });
        continue;
      }
      const verdict = this.decide(tool, args.value);
      if (verdict.decision === 'deny') {
        pending.results.push({
          id: call.id,
          name: call.name,
          output: `Not allowed: ${verdict.reason}. Do not try this call again.`,
          isError: true,
        });
        await this.toolEvent(call, tool.ref, args.value, { state: 'denied', ok: false, summary: verdict.reason });
        continue;
      }
      if (verdict.decision === 'ask') {
        await this.saveTranscript();
        await this.askApproval(undefined, { call, tool, args: args.value, verdict });
        return true;
      }
      pending.results.push(await this.runTool(call, tool, args.value, verdict));
    }
    // Every call of this step was refused: the model may be stuck writing bad calls.
    this.malformedSteps = malformed === pending.calls.length ? this.malformedSteps + 1 : 0;
    this.transcript.messages.push({ role: 'tool', results: pending.results });
    this.transcript.pending = undefined;
    if (this.malformedSteps >= MAX_MALFORMED_STEPS) {
      const last = pending.results[pending.results.length - 1]?.output ?? '';
      await this.fail(
        `${this.actorName} made only invalid tool calls ${MAX_MALFORMED_STEPS} steps in a row; the last: ${last}`,
        'the model may not handle tools well: try another model, or fewer tools',
        { kind: 'invalid-tool-calls' },
      );
      return true;
    }
    return false;
  }

  /** The policy's verdict; a read-only tool runs unless a rule denies it. */
  private decide(tool: ChatTool, args: Record<string, unknown>): PolicyVerdict {
    return decideToolCall(this.tools.profile, {
      tool: tool.ref,
      readOnly: tool.readOnly,
      writes: tool.writes,
      command: tool.commandOf(args),
    });
  }

  private async runTool(
    call: ModelToolCall,
    tool: ChatTool,
    args: Record<string, unknown>,
    verdict: PolicyVerdict | undefined,
  ): Promise<ModelToolResult> {
    const veto = await this.hooks?.before(tool.ref, args);
    if (veto) {
      const text = vetoText(veto);
      await this.toolEvent(call, tool.ref, args, { state: 'vetoed', ok: false, summary: text, hook: veto.hook });
      return { id: call.id, name: call.name, output: text, isError: true };
    }
    const artifactId = await this.toolEvent(call, tool.ref, args, { state: 'running' });
    const t0 = Date.now();
    let outcome;
    try {
      outcome = await tool.run(args, this.signal);
    } catch (err) {
      if (this.signal.aborted) throw err;
      outcome = { ok: false, summary: `${tool.ref} failed: ${(err as Error).message}`, output: '' };
    }
    if (this.signal.aborted) throw new ProviderFailure('cancelled', 'cancelled', '');
    this.transcript.toolCalls++;
    await this.hooks?.after(tool.ref, args, outcome);
    await this.toolEvent(
      call,
      tool.ref,
      args,
      {
        state: outcome.ok ? 'done' : 'failed',
        ok: outcome.ok,
        summary: outcome.summary,
        durationMs: Date.now() - t0,
        ...(outcome.filesTouched?.length ? { filesTouched: outcome.filesTouched } : {}),
        ...(verdict ? { policy: verdict.reason } : {}),
      },
      artifactId,
    );
    return resultForModel(call, outcome);
  }

  /** A tool call as clients see it: a `tool-call` artifact (a data part), replaced as it progresses. */
  private async toolEvent(
    call: ModelToolCall,
    ref: string,
    args: unknown,
    fields: Record<string, unknown>,
    artifactId?: string,
  ): Promise<string> {
    const id = artifactId ?? `tool-call-${++this.toolArtifacts}`;
    await this.turn.artifact({
      artifactId: id,
      name: 'tool-call',
      parts: [{ data: { tool: ref, callId: call.id, arguments: args, ...fields }, mediaType: 'application/json' }],
      metadata: { kind: 'tool-call' },
    });
    return id;
  }

  private async askApproval(
    problem: string | undefined,
    asking?: { call: ModelToolCall; tool: ChatTool; args: Record<string, unknown>; verdict: PolicyVerdict },
  ): Promise<void> {
    const pending = this.transcript.pending;
    const call = asking?.call ?? pending?.calls[pending.next];
    if (!call) return;
    const tool = asking?.tool ?? this.tools.byModelName.get(call.name);
    const args = asking?.args ?? (parseArgs(call.arguments).value as Record<string, unknown>);
    const ref = tool?.ref ?? call.name;
    const request = {
      kind: 'tool-call',
      tool: ref,
      args,
      preview: previewOf(ref, args),
      ...(asking ? { policy: asking.verdict } : {}),
      options: ['approve', 'reject', 'reject-with-guidance'],
    };
    const question = `Allow ${ref} ${argSummary(args)}? (yes / no / a sentence of guidance)`;
    await this.turn.status('TASK_STATE_INPUT_REQUIRED', problem ? `${problem}\n${question}` : question, {
      data: { approvalRequest: request },
      taskMetadata: { usage: this.usage(), ...this.contextMeta() },
    });
  }

  private toolRef(call: ModelToolCall): string {
    return this.tools.byModelName.get(call.name)?.ref ?? call.name;
  }

  /**
   * Earlier turns of the session, oldest first: the newest compaction's summary in place of the
   * turns it covers, after compacting them first when they fill more than the actor's threshold.
   */
  private async history(): Promise<SessionHistory> {
    const { task } = this.turn;
    const stored = (await this.deps.turnsOf(task.contextId, HISTORY_TURNS)).filter((s) => s.task.id !== task.id);
    const transcripts = await this.deps.transcripts.forContext(
      task.contextId,
      stored.map((s) => s.task.id),
    );
    let history = sessionHistory(stored, transcripts);
    const compaction = this.deps.compaction;
    if (compaction && this.session)
      history =
        (await compaction.compactIfDue({
          actorName: this.actorName,
          def: this.def,
          session: this.session,
          history,
          tokens: this.tokens,
          signal: this.signal,
        })) ?? history;
    this.compaction = history.compaction;
    return history;
  }

  /** What the system prompt says of the summary standing in for the oldest turns (empty: none). */
  private compactionPrompt(): string {
    return compactionSection(this.compaction);
  }

  /**
   * The files of the session's project the context service selects for this message (view
   * `default`), as text for the system prompt; empty without a project or a context service. A
   * failure to assemble is told to the model and logged, and the turn goes on without files.
   */
  private async projectContext(): Promise<string> {
    const project = this.project;
    const context = this.deps.context;
    if (!project || !context) return '';
    try {
      const c = await context.assemble({
        project,
        view: 'default',
        goal: textOf(this.turn.message.parts),
        modelWindow: this.def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow,
        answerReserve: this.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens,
        signal: this.signal,
      });
      return fragmentsText(c, 'for this message');
    } catch (err) {
      if (this.signal.aborted) throw err;
      this.deps.logger.warn({ err, project }, 'the context of a chat turn could not be assembled');
      return `The files of project ${project} could not be selected for this turn: ${(err as Error).message}.`;
    }
  }

  private systemPrompt(): string {
    const parts = [this.def.systemPrompt ?? '', ...this.tools.instructions];
    const ws = this.tools.workspace;
    if (ws)
      parts.push(
        `You work on the project ${ws.project}: file paths are relative to the root of its resource ${ws.resource}.`,
      );
    if (this.tools.problems.length > 0) parts.push(`Unavailable in this turn: ${this.tools.problems.join('; ')}.`);
    return parts.filter((p) => p.trim() !== '').join('\n\n');
  }

  /** The model and fallbacks of the turn, going on where an earlier part of the task left off. */
  private async openCandidates(): Promise<void> {
    const lookup = this.deps.lookupActor ?? (() => Promise.resolve(undefined));
    this.candidates = new ModelCandidates(
      { name: this.actorName, def: this.def, apiKey: this.apiKey },
      {
        models: this.deps.models,
        keys: this.deps.keys,
        lookup,
        onFallback: (fallbacks, text) => this.turn.status('TASK_STATE_WORKING', text, { taskMetadata: { fallbacks } }),
      },
    );
    await this.candidates.resume(fallbacksOf(this.turn.task.metadata));
  }

  private usage(): TurnUsage {
    const u = this.transcript.usage;
    const answering = this.candidates?.current ?? { name: this.actorName, def: this.def };
    const out: TurnUsage = {
      actor: answering.name,
      provider: answering.def.provider,
      model: answering.def.model,
      inputTokens: u.inputTokens,
      outputTokens: u.outputTokens,
      steps: this.transcript.steps,
      toolCalls: this.transcript.toolCalls,
    };
    const cost = this.candidates ? this.candidates.cost(u) : costOf(this.def.prices, u);
    if (cost) out.cost = cost;
    return out;
  }

  private async complete(note: 'length' | undefined): Promise<void> {
    // The answer's last chunk (empty: when the model finished, its words were already sent).
    await this.turn.artifact(
      { artifactId: 'response', name: 'response', parts: [{ text: '' }] },
      { append: this.responseOpen, lastChunk: true },
    );
    const text =
      note === 'length'
        ? `The answer was cut at maxTokens (${this.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens} tokens)`
        : undefined;
    await this.end('TASK_STATE_COMPLETED', text);
  }

  private async fail(message: string, hint: string, error: Record<string, unknown>): Promise<void> {
    if (this.signal.aborted) return;
    const sentence = (t: string): string => (/[.!?]$/.test(t) ? t : `${t}.`);
    const said = `${sentence(message)} ${sentence(`${hint.charAt(0).toUpperCase()}${hint.slice(1)}`)}`;
    await this.end('TASK_STATE_FAILED', said, {
      error: { ...error, message, hint },
    });
  }

  private async end(state: TaskState, text?: string, data?: unknown): Promise<void> {
    const extra = {
      taskMetadata: { usage: this.usage(), ...this.problemsMeta(), ...this.contextMeta() },
      ...(data ? { data } : {}),
    };
    await this.turn.status(state, text, extra);
  }

  /** `metadata.context.compaction`: the compaction whose summary the prompt carried. */
  private contextMeta(): Record<string, unknown> {
    const c = this.compaction;
    return c ? { context: { compaction: { taskId: c.taskId, covers: c.covers } } } : {};
  }

  private problemsMeta(): Record<string, unknown> {
    const fallbacks = this.candidates?.fallbacks ?? [];
    return {
      ...(this.tools?.problems.length ? { toolProblems: this.tools.problems } : {}),
      ...(fallbacks.length ? { fallbacks } : {}),
    };
  }
}

/** The answer's text and its `approval` data part, if any. */
function answerOf(m: Message): { text?: string; approval?: unknown } {
  const data = m.parts.find(
    (p) => p.data !== undefined && typeof p.data === 'object' && p.data !== null && 'approval' in p.data,
  )?.data as { approval?: unknown } | undefined;
  return data ? { approval: data.approval } : { text: textOf(m.parts) };
}
