import { textOf, type TaskState } from '../../../domain/a2a.model.ts';
import { parseApprovalAnswer } from '../../../domain/plan/approval.ts';
import { decideToolCall } from '../../../domain/plan/policy.ts';
import { LLM_ACTOR_DEFAULTS, namesApiKey, type ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { fallbacksOf } from '../../../domain/registry/fallbacks.ts';
import type { Session } from '../../../domain/session.ts';
import { AppError } from '../../../domain/errors.ts';
import type { ActorTurn } from '../../ports/actor.port.ts';
import { toolCallHooks, type ToolCallHooks } from '../../hooks/tool-call-hooks.ts';
import { ProviderFailure } from '../../ports/language-model.port.ts';
import { MAX_MALFORMED_STEPS, runAgentLoop } from '../../agent/agent-loop.ts';
import type { AgentConfig, AgentOutcome, AlwaysRule, ApprovalGate, CallAnswer } from '../../agent/agent.types.ts';
import { approvalRequest, ChatRecorder } from './chat.recorder.ts';
import type { Transcript } from '../../ports/transcript.port.ts';
import type { ChatToolSet } from './chat-toolbox.service.ts';
import { MessageTokens } from './history.ts';
import { compactionSection, sessionHistory, type SessionHistory } from '../../sessions/session-history.ts';
import { apiKeyFix } from './api-key-fix.ts';
import type { LlmActorDeps } from './llm-actor.deps.ts';
import { ModelCandidates } from './model-candidates.service.ts';
import { answerOf, chatProjectContext, chatSystemPrompt, turnUsage, type TurnUsage } from './chat.prompt.ts';

/** Earlier turns read for the history (the window trims further). */
export const HISTORY_TURNS = 200;

/** One chat turn of an LLM actor (see llm.actor.ts): from the key and tools to the task's last status. */
export class LlmTurn {
  private readonly tokens: MessageTokens;
  private readonly signal: AbortSignal;
  /** Empty until the turn knows what it goes on with (see transcriptOrNew). */
  private transcript: Transcript = { messages: [], steps: 0, usage: { inputTokens: 0, outputTokens: 0 }, toolCalls: 0 };
  private tools!: ChatToolSet;
  private apiKey: string | undefined;
  private responseOpen: boolean;
  /** The step whose words were streamed last (a new step starts a new paragraph). */
  private lastStep = -1;
  /** What the session's earlier turns answered "always" to. */
  private sessionAlways: AlwaysRule[] = [];
  /** The files this turn changed (the undo history's answer after its last write). */
  private changed: string[] = [];
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
          `${apiKeyFix(this.def, { mode: this.deps.mode })}, then send again`,
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
      await this.loop(earlier.answer, earlier.problem);
    } catch (err) {
      if (this.signal.aborted) return;
      if (err instanceof ProviderFailure)
        return this.fail(err.message, err.hint, { kind: err.kind, ...(err.status ? { status: err.status } : {}) });
      throw err;
    }
  }

  /** The transcript to go on with: a new one, or (a follow-up) the task's own, with the answer read. */
  private async transcriptOrNew(): Promise<{ answer?: CallAnswer; problem?: string }> {
    const { task, message, isFollowUp } = this.turn;
    const stored = isFollowUp ? await this.deps.transcripts.get(task.id) : undefined;
    if (!stored) {
      this.transcript = {
        messages: [{ role: 'user', text: textOf(message.parts) }],
        steps: 0,
        usage: { inputTokens: 0, outputTokens: 0 },
        toolCalls: 0,
      };
      return {};
    }
    this.transcript = stored;
    const pending = stored.pending;
    const call = pending?.calls[pending.next];
    if (!call) {
      stored.messages.push({ role: 'user', text: textOf(message.parts) });
      return {};
    }
    try {
      return { answer: { callId: call.id, answer: parseApprovalAnswer(answerOf(message)) } };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Not an answer: the call is asked again, saying what an answer looks like.
      return { problem: err.message };
    }
  }

  private async loop(answer: CallAnswer | undefined, problem: string | undefined): Promise<void> {
    const outcome = await runAgentLoop(await this.loopOptions(answer, problem), this.transcript);
    await this.settle(outcome);
  }

  /** The agent loop configured for a chat turn: this actor's model, tools, profile, approvals and window. */
  private async loopOptions(answer: CallAnswer | undefined, problem: string | undefined): Promise<AgentConfig> {
    const maxSteps = this.def.maxToolSteps ?? LLM_ACTOR_DEFAULTS.maxToolSteps;
    const history = (await this.history()).turns.map((t) => t.messages).filter((m) => m.length > 0);
    const system = [this.systemPrompt(), this.compactionPrompt(), await this.projectContext()]
      .filter((p) => p !== '')
      .join('\n\n');
    const window = this.def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
    const reserve = Math.min(this.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens, Math.floor(window / 2));
    const candidates = this.candidates as ModelCandidates;
    const profile = this.tools.profile;
    const ws = this.tools.workspace;
    const session = this.session;
    const checkpoints = ws && session ? this.deps.checkpoints : undefined;
    const at = { session: session?.id ?? '', task: this.turn.task.id, root: ws?.root ?? '' };
    return {
      model: {
        name: this.actorName,
        provider: this.def.provider,
        modelId: this.def.model,
        stream: (req) => candidates.stream(req),
        count: (text) => this.deps.tokens.count(text),
      },
      system,
      tools: this.tools.tools,
      decide: (tool, args) =>
        decideToolCall(profile, {
          tool: tool.ref,
          readOnly: tool.readOnly,
          writes: tool.writes,
          command: tool.commandOf(args),
        }),
      approvals: {
        always: () => [...this.sessionAlways, ...(this.transcript.always ?? [])],
        remember: (rule) => {
          (this.transcript.always ??= []).push(rule);
          return Promise.resolve();
        },
        ask: (e) => this.askApproval(e),
      },
      recorder: new ChatRecorder(this.turn),
      hooks: this.hooks,
      budget: { afterStep: () => undefined },
      validate: (schema, value) => this.deps.validator.validate(schema, value),
      signal: this.signal,
      maxSteps,
      window: { contextWindow: window, reserve, history },
      onText: (delta, step) => this.stream(delta, step),
      save: () => this.saveTranscript(),
      answer,
      answerProblem: problem,
      tracer: this.deps.tracer,
      ...(checkpoints
        ? {
            beforeWrite: () => checkpoints.before(at),
            afterWrite: async () => {
              this.changed = await checkpoints.after(at);
            },
          }
        : {}),
    };
  }

  /** How the turn ends, by how the loop stopped (waiting: the task asks, and the turn ends here). */
  private async settle(outcome: AgentOutcome): Promise<void> {
    switch (outcome.kind) {
      case 'waiting':
        return;
      case 'answered':
      case 'stopped':
        await this.saveTranscript();
        return this.complete(outcome.kind === 'answered' && outcome.reason === 'length' ? 'length' : undefined);
      case 'step-limit':
        await this.saveTranscript();
        return this.complete('step-limit');
      case 'invalid-calls':
        await this.saveTranscript();
        return this.fail(
          `${this.actorName} made only invalid tool calls ${MAX_MALFORMED_STEPS} steps in a row; the last: ${outcome.last}`,
          'the model may not handle tools well: try another model, or fewer tools',
          { kind: 'invalid-tool-calls' },
        );
      case 'window':
        return this.fail(
          `This turn does not fit ${this.actorName}'s context window: its messages and tool results need more than the ${outcome.room} tokens left after ${outcome.reserve} reserved for the answer (contextWindow ${outcome.window})`,
          'raise contextWindow (if the model has a larger window), lower maxTokens, or start a new session',
          { kind: 'context-window' },
        );
      case 'budget':
        await this.saveTranscript();
        return this.fail(outcome.stop.message, 'raise the budget, or ask for something smaller', { kind: 'budget' });
    }
  }

  /** The transcript, once the task's row is stored (its foreign key; see ActorTurn.stored). */
  private async saveTranscript(): Promise<void> {
    await this.turn.stored();
    await this.deps.transcripts.save(this.turn.task.id, this.turn.task.contextId, this.transcript);
  }

  /** The model's words as `response` chunks; a new step's words start on a new paragraph of the same answer. */
  private async stream(delta: string, step: number): Promise<void> {
    const text = this.responseOpen && step !== this.lastStep ? `\n\n${delta}` : delta;
    this.lastStep = step;
    await this.turn.artifact(
      { artifactId: 'response', name: 'response', parts: [{ text }] },
      { append: this.responseOpen },
    );
    this.responseOpen = true;
  }

  private async askApproval(e: Parameters<ApprovalGate['ask']>[0]): Promise<void> {
    const { question, request } = approvalRequest(e, e.problem);
    await this.turn.status('TASK_STATE_INPUT_REQUIRED', question, {
      data: { approvalRequest: request },
      taskMetadata: { usage: this.usage(), ...this.contextMeta() },
    });
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
    this.sessionAlways = [...transcripts.values()].flatMap((t) => t.always ?? []);
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
          spender: this.turn.by,
        })) ?? history;
    this.compaction = history.compaction;
    return history;
  }

  /** What the system prompt says of the summary standing in for the oldest turns (empty: none). */
  private compactionPrompt(): string {
    return compactionSection(this.compaction);
  }

  /** What the turn is given of the session's project (see chatProjectContext). */
  private projectContext(): Promise<string> {
    return chatProjectContext(this.deps, {
      project: this.project,
      mode: this.session?.context,
      message: this.turn.message,
      def: this.def,
      signal: this.signal,
    });
  }

  private systemPrompt(): string {
    return chatSystemPrompt(this.def, this.tools);
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
        spender: this.turn.by,
      },
    );
    await this.candidates.resume(fallbacksOf(this.turn.task.metadata));
  }

  private usage(): TurnUsage {
    return turnUsage(this.transcript, this.candidates, { name: this.actorName, def: this.def });
  }

  private async complete(note: 'length' | 'step-limit' | undefined): Promise<void> {
    // The answer's last chunk (empty: when the model finished, its words were already sent).
    await this.turn.artifact(
      { artifactId: 'response', name: 'response', parts: [{ text: '' }] },
      { append: this.responseOpen, lastChunk: true },
    );
    const maxSteps = this.def.maxToolSteps ?? LLM_ACTOR_DEFAULTS.maxToolSteps;
    const text =
      note === 'length'
        ? `The answer was cut at maxTokens (${this.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens} tokens)`
        : note === 'step-limit'
          ? `${this.actorName} used its ${maxSteps} tool steps (maxToolSteps) and summarised where it stopped; send "go on" to continue, or raise maxToolSteps of ${this.actorName}`
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
      taskMetadata: {
        usage: this.usage(),
        ...this.problemsMeta(),
        ...this.contextMeta(),
        ...(this.changed.length ? { changes: { files: this.changed } } : {}),
      },
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
