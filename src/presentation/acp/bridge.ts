/**
 * The ACP agent: each ACP session is an A2A session (same id), each prompt an A2A turn streamed as
 * `session/update`s; approvals become permission requests, `session/cancel` cancels the task. A
 * prompt that starts with a slash command runs a plan operation instead (plans.ts).
 */
import {
  PROTOCOL_VERSION,
  RequestError,
  type AgentCapabilities,
  type AgentContext,
  type ContentBlock,
  type InitializeResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptCapabilities,
  type PermissionOption,
  type PromptResponse,
  type RequestPermissionOutcome,
  type SessionUpdate,
  type ToolCallUpdate,
} from '@agentclientprotocol/sdk';
import {
  approvalPart,
  sendMessage,
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  sessionList,
  sessionShow,
  type A2AClient,
  type Message,
  type Part,
} from '../../protocol/client/index.ts';
import type { Target } from '../cli/render/error.render.ts';
import { messageWords } from '../cli/render/task.render.ts';
import { isTurnNumber } from '../cli/render/chat-commands.render.ts';
import { answerOf, permissionOptions, StandingDecisions, type Decision } from './acp-approval.ts';
import { runChatCommand } from './chat-commands.ts';
import { toRequestError, turnFailed } from './acp-errors.ts';
import { AVAILABLE_COMMANDS, slashCommandOf, unknownCommandText, type SlashCommand } from './plan-updates.ts';
import { PlanCommands, type PlanSession } from './plans.ts';
import { replayTurn } from './replay.ts';
import { RunningPrompt } from './running-prompt.ts';
import { listSessions, planSession, sessionMeta, userMessage } from './sessions.ts';
import { projectRootOf, workspaceOf, type SessionDefaults } from './workspace.ts';
import {
  promptCapabilitiesOf,
  promptParts,
  TurnTranslator,
  UnsupportedContentError,
  type TurnEnd,
} from './translate.ts';

export interface BridgeOptions {
  /** The backend (connected once, on first use). */
  connect(): Promise<A2AClient>;
  version: string;
  target: Target;
  /** The command's --actor / --project / --skill: what a new session gets unless `_meta` says otherwise. */
  defaults: SessionDefaults;
  log: (line: string) => void;
}

/** The turns `session/load` replays (session/show's limit). */
const LOAD_TURNS = 1000;

interface SessionState extends PlanSession {
  readonly id: string;
  /** Where the session's file tools work, for absolute paths in tool calls. */
  readonly root: string | undefined;
  readonly decisions: StandingDecisions;
  /** A turn waiting for a text answer (a question that is not an approval): the next prompt answers it. */
  waiting?: string | undefined;
  running?: RunningPrompt | undefined;
}

export class AcpBridge {
  private readonly sessions = new Map<string, SessionState>();
  private streaming = true;
  private prompts: PromptCapabilities = { image: false, audio: false, embeddedContext: false };

  private readonly opts: BridgeOptions;

  constructor(opts: BridgeOptions) {
    this.opts = opts;
  }

  /** The handshake: ACP v1 (the only version this bridge speaks), capabilities from the A2A Agent Card. */
  async initialize(): Promise<InitializeResponse> {
    const client = await this.client();
    const card = await this.backend(() => client.agentCard());
    const caps = (card['capabilities'] ?? {}) as { streaming?: boolean; extensions?: Array<{ params?: unknown }> };
    this.streaming = caps.streaming === true;
    this.prompts = promptCapabilitiesOf(card);
    const methods = (caps.extensions?.[0]?.params as { methods?: string[] } | undefined)?.methods ?? [];
    const agentCapabilities: AgentCapabilities = {
      loadSession: methods.includes(sessionShow.name),
      promptCapabilities: this.prompts,
      sessionCapabilities: {
        ...(methods.includes(sessionList.name) ? { list: {} } : {}),
        ...(methods.includes(sessionDelete.name) ? { delete: {} } : {}),
      },
      // The backend's tools come from its registry (skills with MCP servers), not from the editor.
      mcpCapabilities: { http: false, sse: false },
    };
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities,
      agentInfo: { name: 'cleveragents', title: 'CleverAgents', version: this.opts.version },
      // Locally there is nothing to log in to; a server's token comes from the CLI's configuration.
      authMethods: [],
      _meta: {
        cleveragents: {
          backend: { name: card['name'], version: card['version'] },
          mode: this.opts.target.kind,
          ...(this.opts.target.kind === 'server' ? { server: this.opts.target.url } : {}),
        },
      },
    };
  }

  async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    if (params.mcpServers.length > 0)
      this.opts.log(
        `the editor's ${params.mcpServers.length} MCP server(s) are not used: give the actor a skill with mcpServers instead`,
      );
    const client = await this.client();
    const ws = await this.backend(() => workspaceOf(client, params.cwd, this.opts.defaults, params._meta));
    if (ws.matched) this.opts.log(`${params.cwd} is project ${ws.matched}`);
    const session = await this.backend(() => client.call(sessionCreate, ws.params));
    this.sessions.set(session.id, { ...planSession(session, ws.root), decisions: new StandingDecisions() });
    return { sessionId: session.id, _meta: { cleveragents: { session: sessionMeta(session) } } };
  }

  /** Replays the session's turns (what was asked, answered and run), then it takes prompts. */
  async loadSession(params: LoadSessionRequest, cx: AgentContext): Promise<void> {
    const client = await this.client();
    const { session, tasks } = await this.backend(() =>
      client.call(sessionShow, { sessionId: params.sessionId, turns: LOAD_TURNS }),
    );
    const root = await this.backend(() => projectRootOf(client, session.project));
    const state: SessionState = { ...planSession(session, root), decisions: new StandingDecisions() };
    for (const task of tasks) for (const update of replayTurn(task, root)) await this.update(cx, session.id, update);
    const last = tasks.at(-1);
    if (last?.status.state === 'TASK_STATE_INPUT_REQUIRED') {
      // The question it waits on is shown, so that the next prompt reads as its answer.
      state.waiting = last.id;
      const question = messageWords(last.status.message);
      if (question)
        await this.update(cx, session.id, {
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: question },
        });
    }
    this.sessions.set(session.id, state);
  }

  /** The slash commands the session takes (sent once the editor knows the session). */
  async announceCommands(sessionId: string, cx: AgentContext): Promise<void> {
    await this.update(cx, sessionId, {
      sessionUpdate: 'available_commands_update',
      availableCommands: [...AVAILABLE_COMMANDS],
    });
  }

  async listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    const client = await this.client();
    return this.backend(() => listSessions(client, params));
  }

  /** Deletes the session and its turns in the backend (a running prompt is cancelled first). */
  async deleteSession(sessionId: string): Promise<void> {
    const client = await this.client();
    await this.sessions.get(sessionId)?.running?.cancel();
    await this.backend(() => client.call(sessionDelete, { sessionId }));
    this.sessions.delete(sessionId);
  }

  async cancel(sessionId: string): Promise<void> {
    await this.sessions.get(sessionId)?.running?.cancel();
  }

  async prompt(
    params: { sessionId: string; prompt: ContentBlock[] },
    cx: AgentContext,
    signal: AbortSignal,
  ): Promise<PromptResponse> {
    const client = await this.client();
    const s = this.sessions.get(params.sessionId);
    if (!s)
      throw new RequestError(-32002, `Session ${params.sessionId} is not open in this bridge`, {
        hint: 'start it with session/new, or open it with session/load',
      });
    if (s.running) throw RequestError.invalidRequest(undefined, 'a prompt is already running in this session');
    const command = slashCommandOf(promptText(params.prompt));
    if (command) return this.command(client, s, command, cx, signal);
    let parts: Part[];
    try {
      parts = promptParts(params.prompt, this.prompts);
    } catch (err) {
      if (err instanceof UnsupportedContentError) throw RequestError.invalidParams(undefined, err.message);
      throw err;
    }
    const run = new RunningPrompt(client);
    s.running = run;
    signal.addEventListener('abort', () => void run.cancel(), { once: true });
    const tr = new TurnTranslator(s.root);
    let message = userMessage(s.id, parts, s.waiting);
    s.waiting = undefined;
    try {
      for (;;) {
        await this.turn(client, s, message, tr, run, cx);
        if (run.isCancelled) return { stopReason: 'cancelled' };
        const end: TurnEnd = tr.end();
        if (end.kind === 'approval') {
          const decision = await this.decide(s, end, tr, run, cx);
          if (decision === undefined) {
            // Not answered: the tool does not run, and the task ends canceled rather than waiting.
            await run.cancel();
            return { stopReason: 'cancelled' };
          }
          message = userMessage(s.id, [approvalPart({ decision })], end.taskId);
          continue;
        }
        if (end.kind === 'question') {
          await this.update(cx, s.id, {
            sessionUpdate: 'agent_message_chunk',
            content: { type: 'text', text: end.text },
          });
          s.waiting = end.taskId;
          return { stopReason: 'end_turn', _meta: this.turnMeta(tr) };
        }
        if (end.kind === 'failed') throw turnFailed(end, tr.task?.id);
        return { stopReason: end.stopReason, _meta: this.turnMeta(tr) };
      }
    } catch (err) {
      if (run.isCancelled) return { stopReason: 'cancelled' };
      throw toRequestError(err, this.opts.target);
    } finally {
      s.running = undefined;
    }
  }

  /**
   * A slash command: a chat command on the session, a plan operation through the plan methods,
   * or a message naming the commands there are. None is sent to the actor.
   */
  private async command(
    client: A2AClient,
    s: SessionState,
    command: NonNullable<SlashCommand>,
    cx: AgentContext,
    signal: AbortSignal,
  ): Promise<PromptResponse> {
    if (command.kind === 'unknown') return this.say(cx, s.id, unknownCommandText(command.name));
    // `/diff` is the plan's while the session has one; a turn number, or no plan, asks for the chat's changes.
    const chatDiff = command.name === 'diff' && (!s.planId || isTurnNumber(command.arg));
    if (command.kind === 'chat-command' || chatDiff) {
      const answer = await this.backend(() =>
        runChatCommand(client, s, command.kind === 'chat-command' ? command.name : 'diff', command.arg, signal),
      );
      if (answer.actor !== undefined) s.actor = answer.actor;
      return this.say(cx, s.id, answer.text);
    }
    const run = new RunningPrompt(client);
    s.running = run;
    signal.addEventListener('abort', () => void run.cancel(), { once: true });
    const plans = new PlanCommands(s, {
      client,
      cancelling: run.cancelling.signal,
      drop: run.drop.signal,
      update: (u) => this.update(cx, s.id, u),
      permission: (toolCall, options) => this.permission(s, toolCall, options, run, cx),
      onCancel: (cancel) => run.cancelBy(cancel),
    });
    try {
      const stopReason = await plans.run(command.name, command.arg);
      return {
        stopReason: run.isCancelled ? 'cancelled' : stopReason,
        ...(s.planId ? { _meta: { cleveragents: { planId: s.planId } } } : {}),
      };
    } catch (err) {
      if (run.isCancelled) return { stopReason: 'cancelled' };
      throw toRequestError(err, this.opts.target);
    } finally {
      s.running = undefined;
    }
  }

  /** Answers a prompt in words (a command's answer): one agent message, and the turn ends. */
  private async say(cx: AgentContext, sessionId: string, text: string): Promise<PromptResponse> {
    await this.update(cx, sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
    return { stopReason: 'end_turn' };
  }

  /** One A2A send of the prompt (or of an approval), its events translated as they come. */
  private async turn(
    client: A2AClient,
    s: SessionState,
    message: Message,
    tr: TurnTranslator,
    run: RunningPrompt,
    cx: AgentContext,
  ): Promise<void> {
    if (!this.streaming) {
      const result = await client.call(sendMessage, { message }, { signal: run.drop.signal });
      if ('task' in result) run.started(result.task.id);
      for (const update of tr.push(result)) await this.update(cx, s.id, update);
      return;
    }
    try {
      for await (const { event } of client.stream(sendStreamingMessage, { message }, { signal: run.drop.signal })) {
        for (const update of tr.push(event)) await this.update(cx, s.id, update);
        if (tr.task) run.started(tr.task.id);
      }
    } catch (err) {
      // Dropped after a cancel the backend could not honour: the prompt ends cancelled all the same.
      if (!run.drop.signal.aborted) throw err;
    }
  }

  /** The client's decision on an approval (or a standing one); undefined: the request was cancelled. */
  private async decide(
    s: SessionState,
    end: TurnEnd & { kind: 'approval' },
    tr: TurnTranslator,
    run: RunningPrompt,
    cx: AgentContext,
  ): Promise<Decision | undefined> {
    const standing = s.decisions.of(end.request.tool);
    if (standing) {
      this.opts.log(`${end.request.tool}: ${standing} (as chosen earlier in this session)`);
      return standing;
    }
    const toolCall = tr.approvalCall(end.taskId, end.request);
    await this.update(cx, s.id, toolCall);
    const { sessionUpdate: _, ...call } = toolCall;
    const outcome = await this.permission(s, call, permissionOptions(end.request.options), run, cx);
    if (!outcome) return undefined;
    const answer = answerOf(outcome);
    if ('cancelled' in answer || run.isCancelled) return undefined;
    s.decisions.remember(end.request.tool, answer);
    return answer.decision;
  }

  /** Asks the editor's permission; undefined when the prompt was cancelled while it asked. */
  private async permission(
    s: SessionState,
    toolCall: ToolCallUpdate,
    options: PermissionOption[],
    run: RunningPrompt,
    cx: AgentContext,
  ): Promise<RequestPermissionOutcome | undefined> {
    try {
      const res = await cx.request(
        'session/request_permission',
        { sessionId: s.id, toolCall, options },
        { cancellationSignal: run.cancelling.signal, stopWaitingOnCancel: true },
      );
      return res.outcome;
    } catch (err) {
      if (err instanceof RequestError && err.code === -32800) return undefined;
      throw err;
    }
  }

  /** What the prompt's result carries besides the stop reason: the A2A task and its token usage. */
  private turnMeta(tr: TurnTranslator): Record<string, unknown> {
    const task = tr.task;
    if (!task) return {};
    const usage = task.metadata?.['usage'];
    return { cleveragents: { taskId: task.id, ...(usage !== undefined ? { usage } : {}) } };
  }

  private update(cx: AgentContext, sessionId: string, update: SessionUpdate): Promise<void> {
    return cx.notify('session/update', { sessionId, update });
  }

  private client(): Promise<A2AClient> {
    return this.backend(() => this.opts.connect());
  }

  /** Calls the backend; its errors become ACP errors with the message and hint. */
  private async backend<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toRequestError(err, this.opts.target);
    }
  }
}

/** The prompt's words (its text blocks), to tell a slash command from a chat turn. */
const promptText = (prompt: ContentBlock[]): string => prompt.map((b) => (b.type === 'text' ? b.text : '')).join('');
