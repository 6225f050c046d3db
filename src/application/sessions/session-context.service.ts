/**
 * `session/context`: what the next turn of a session would send to its model — the system prompt
 * (the actor's and skills' instructions, the compaction summary, the project's files), the earlier
 * turns the window keeps, the tools offered — counted the way the turn counts them, with the same
 * functions (chat.prompt.ts, session-history.ts, the agent loop's window fit). Nothing is sent to
 * a model and nothing is stored: a compaction that is due is reported, not run.
 */
import { LLM_ACTOR_DEFAULTS, type ActorDefinition } from '../../domain/registry/actor.definition.ts';
import type { Session } from '../../domain/session.ts';
import type { SessionContextPreview } from '../../domain/session-views.ts';
import { chatProjectContextOf, chatSystemPrompt } from '../actors/llm/chat.prompt.ts';
import type { ChatToolbox, ChatToolSet } from '../actors/llm/chat-toolbox.service.ts';
import { fitToWindow, MessageTokens } from '../actors/llm/history.ts';
import { HISTORY_TURNS } from '../actors/llm/llm-turn.ts';
import type { ContextProvider } from '../context/context.types.ts';
import type { ModelMessage, TokenCounter } from '../ports/language-model.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { SessionRepository } from '../ports/session.repository.port.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { TranscriptStore } from '../ports/transcript.port.ts';
import type { CompactionService } from './compaction.service.ts';
import { compactionSection, sessionHistory } from './session-history.ts';
import { ownedSession } from './session.service.ts';

export interface SessionContextDeps {
  sessions: SessionRepository;
  tasks: TaskRepository;
  /** An actor's definition by name, as the registry hands it out for use. */
  actor(name: string): Promise<ActorDefinition | undefined>;
  /** Absent when this agent runs no LLM providers (every actor is then a built-in one). */
  llm?:
    | {
        toolbox: ChatToolbox;
        tokens: TokenCounter;
        transcripts: TranscriptStore;
        context?: ContextProvider | undefined;
        compaction?: CompactionService | undefined;
      }
    | undefined;
  logger: Logger;
}

/** The first line of a tool's description, as `/tools` lists it. */
const oneLine = (s: string): string => (s.split('\n').find((l) => l.trim() !== '') ?? '').trim();

export class SessionContextService {
  readonly #deps: SessionContextDeps;

  constructor(deps: SessionContextDeps) {
    this.#deps = deps;
  }

  /**
   * What the next turn of the caller's session `id` would send, were its message `message`
   * (its words rank the project's files; default none).
   */
  async preview(
    ref: string,
    principal: Principal,
    opts: { message?: string | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<SessionContextPreview> {
    const session = await ownedSession(this.#deps.sessions, ref, principal);
    const id = session.id;
    const def = await this.#deps.actor(session.actor);
    const llm = this.#deps.llm;
    const none = { tokens: 0, instructions: 0, compaction: 0, project: 0 };
    const turns = await this.#deps.tasks.countByContext(id);
    if (!def || def.provider === 'builtin' || !llm)
      // A built-in actor answers by itself: no model, no prompt, no tools.
      return {
        sessionId: id,
        actor: session.actor,
        system: none,
        history: { turns, compacted: 0, kept: 0, dropped: 0, messages: 0, tokens: 0, compactionDue: 0 },
        tools: [],
        toolTokens: 0,
        problems: [],
        totals: { tokens: 0, room: 0, window: 0 },
      };
    const signal = opts.signal ?? new AbortController().signal;
    const tools = await llm.toolbox.assemble(def, session, signal);
    const counter = new MessageTokens(llm.tokens);
    const window = def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
    // As the turn's loop reserves it (llm-turn.ts).
    const reserve = Math.min(def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens, Math.floor(window / 2));
    const history = await this.#history(session, llm);
    const due = llm.compaction ? (await llm.compaction.due(def, history, counter)).length : 0;
    const message = { messageId: 'preview', role: 'ROLE_USER' as const, parts: [{ text: opts.message ?? '' }] };
    const project = await chatProjectContextOf(
      { context: llm.context, logger: this.#deps.logger },
      { project: session.project, mode: session.context, message, def, signal },
    );
    const instructions = chatSystemPrompt(def, tools);
    const summary = compactionSection(history.compaction);
    // The system prompt as the turn joins it (llm-turn.ts, loopOptions).
    const system = [instructions, summary, project.text].filter((p) => p !== '').join('\n\n');
    const count = (t: string): Promise<number> => (t === '' ? Promise.resolve(0) : llm.tokens.count(t));
    const offered = tools.tools.map((t) => ({
      name: t.modelName,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
    const toolTokens = await counter.ofTools(offered);
    const systemTokens = await count(system);
    const earlier = history.turns.map((t) => t.messages).filter((m) => m.length > 0);
    const current: ModelMessage[] = opts.message ? [{ role: 'user', text: opts.message }] : [];
    const fitted = await fitToWindow(counter, window - reserve, systemTokens + toolTokens, earlier, current);
    const keptTurns = earlier.slice(fitted ? fitted.droppedTurns : earlier.length);
    const kept = keptTurns.flat();
    const historyTokens = await counter.ofAll(kept);
    return {
      sessionId: id,
      actor: session.actor,
      model: { provider: def.provider, model: def.model, contextWindow: window, reserve },
      system: {
        tokens: systemTokens,
        instructions: await count(instructions),
        compaction: await count(summary),
        project: await count(project.text),
      },
      history: {
        turns: history.turns.length + (history.compaction?.covers.length ?? 0),
        compacted: history.compaction?.covers.length ?? 0,
        kept: keptTurns.length,
        dropped: earlier.length - keptTurns.length,
        messages: kept.length,
        tokens: historyTokens,
        compactionDue: due,
      },
      ...(session.project ? { project: projectPart(session, project) } : {}),
      tools: toolsOf(tools),
      toolTokens,
      problems: tools.problems,
      totals: {
        tokens: fitted ? fitted.promptTokens : systemTokens + toolTokens + historyTokens,
        room: window - reserve,
        window,
      },
    };
  }

  /** The session's earlier turns as the next turn reads them (the newest compaction standing in for older ones). */
  async #history(session: Session, llm: NonNullable<SessionContextDeps['llm']>) {
    const stored = await this.#deps.tasks.listByContext(session.id, HISTORY_TURNS);
    const transcripts = await llm.transcripts.forContext(
      session.id,
      stored.map((s) => s.task.id),
    );
    return sessionHistory(stored, transcripts);
  }
}

function toolsOf(set: ChatToolSet): SessionContextPreview['tools'] {
  return set.tools.map((t) => ({ name: t.ref, description: oneLine(t.description), readOnly: t.readOnly }));
}

function projectPart(
  session: Session,
  p: Awaited<ReturnType<typeof chatProjectContextOf>>,
): NonNullable<SessionContextPreview['project']> {
  const c = p.context;
  const snap = c?.snapshot;
  return {
    name: session.project ?? '',
    mode: session.context ?? 'map',
    tokens: c?.tokens ?? 0,
    ...(c?.map ? { map: c.map } : {}),
    ...(snap ? { files: snap.files.map((f) => ({ resource: f.resource, path: f.path, tokens: f.tokens })) } : {}),
    ...(snap?.instructions
      ? { instructions: snap.instructions.map((f) => ({ resource: f.resource, path: f.path, tokens: f.tokens })) }
      : {}),
    ...(p.problem !== undefined ? { problem: p.problem } : {}),
  };
}
