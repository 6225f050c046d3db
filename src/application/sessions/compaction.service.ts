/**
 * Compaction of long sessions: the older turns summarised by a model (the actor's own, or its
 * `compaction.summarizer`), the summary stored as a completed task of the session. Automatic at
 * the start of an LLM turn when the earlier turns pass the actor's threshold (compactIfDue), and on
 * demand (`_cleveragents/session/compact`, compact). The original turns are never changed.
 */
import type { Task } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import {
  COMPACTION_DEFAULTS,
  LLM_ACTOR_DEFAULTS,
  namesApiKey,
  type ActorDefinition,
} from '../../domain/registry/actor.definition.ts';
import type { Session } from '../../domain/session.ts';
import type { MessageTokens } from '../actors/llm/history.ts';
import {
  ProviderFailure,
  type ApiKeys,
  type LanguageModels,
  type ModelUsage,
  type TokenCounter,
} from '../ports/language-model.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { TurnAdmission } from '../ports/quota.port.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { TranscriptStore } from '../ports/transcript.port.ts';
import { viewTask } from '../tasks/task.views.ts';
import {
  compactionSection,
  sessionHistory,
  SUMMARISER_SYSTEM,
  summariserPrompt,
  SUMMARY_ARTIFACT,
  turnsToCompact,
  turnText,
  withCompaction,
  type CompactionMeta,
  type CompactionRecord,
  type HistoryTurn,
  type SessionHistory,
} from './session-history.ts';

/** Earlier turns read for a compaction (as many as a turn's history reads). */
const HISTORY_TURNS = 200;

export interface CompactionDeps {
  tasks: Pick<TaskRepository, 'create' | 'listByContext'>;
  /** LLM providers (absent: this agent runs none, and nothing is compacted). */
  llm?: { models: LanguageModels; keys: ApiKeys; tokens: TokenCounter; transcripts: TranscriptStore } | undefined;
  /** An actor's definition by name (the registry, without access checks). */
  actor(name: string): Promise<ActorDefinition | undefined>;
  /** The caller's session by its id, a unique prefix or `last` (NOT_FOUND when it is not theirs). */
  session(ref: string, principal: Principal): Promise<Session>;
  /** Counts a new task of the session (its taskCount and activity). */
  recordTask(sessionId: string, at: string): Promise<void>;
  /** Refuses an on-demand compaction over the caller's limits, as a chat turn is (absent: none). */
  admission?: TurnAdmission | undefined;
  logger: Logger;
  now?: () => Date;
}

/** What an LLM turn asks of compaction before it builds its prompt. */
export interface DueCheck {
  actorName: string;
  def: ActorDefinition;
  session: Session;
  history: SessionHistory;
  tokens: MessageTokens;
  signal: AbortSignal;
  /** Who sent the turn's message: the summary's tokens count toward their limits (ModelRequest.spender). */
  spender?: string | undefined;
}

export interface CompactResult {
  /** The compaction task (completed, with its `summary` artifact). */
  task: Task;
  /** Turns newly summarised. */
  compacted: number;
}

export class CompactionService {
  private readonly now: () => Date;

  private readonly deps: CompactionDeps;

  constructor(deps: CompactionDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Compacts when the earlier turns (and the summary standing in for older ones) fill more than
   * the actor's threshold of its window: the history to use then, else undefined. A compaction
   * that fails is logged and the turn goes on without it (the window still trims the history).
   */
  async compactIfDue(check: DueCheck): Promise<SessionHistory | undefined> {
    const { def, history, tokens } = check;
    const pick = await this.due(def, history, tokens);
    if (pick.length === 0) return undefined;
    try {
      const record = await this.summarise(check.session, check.actorName, def, history, pick, {
        signal: check.signal,
        spender: check.spender,
      });
      return withCompaction(history, record.record);
    } catch (err) {
      if (check.signal.aborted) throw err;
      this.deps.logger.warn(
        { err, sessionId: check.session.id, actor: check.actorName },
        'the earlier turns of a session could not be compacted; the turn goes on without',
      );
      return undefined;
    }
  }

  /**
   * The turns a turn starting now would summarise first (none: no compaction is due): when the
   * earlier turns and the summary standing in for older ones fill more than the actor's threshold
   * of its window. Nothing is sent to a model (`session/context` previews with it).
   */
  async due(def: ActorDefinition, history: SessionHistory, tokens: MessageTokens): Promise<HistoryTurn[]> {
    const cfg = def.compaction;
    if (!(cfg?.enabled ?? COMPACTION_DEFAULTS.enabled) || !this.deps.llm) return [];
    const window = def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
    const limit = window * (cfg?.threshold ?? COMPACTION_DEFAULTS.threshold);
    let used = history.compaction ? await this.deps.llm.tokens.count(compactionSection(history.compaction)) : 0;
    for (const t of history.turns) used += await tokens.ofAll(t.messages);
    if (used <= limit) return [];
    return turnsToCompact(history, cfg?.keepTurns ?? COMPACTION_DEFAULTS.keepTurns);
  }

  /** Compacts a session of the caller's now, keeping the newest `keepTurns` (default: the actor's). */
  async compact(
    ref: string,
    principal: Principal,
    opts: { keepTurns?: number | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<CompactResult> {
    // Its summary is a model call the caller pays for: refused over their limits before anything.
    await this.deps.admission?.admitTurn(principal);
    const session = await this.deps.session(ref, principal);
    const sessionId = session.id;
    const def = await this.deps.actor(session.actor);
    if (!def)
      throw new AppError('INVALID_STATE', `The actor ${session.actor} of session ${sessionId} no longer exists`, {
        details: { sessionId, actor: session.actor },
        hint: 'register it again (agents actor add) to compact this session',
      });
    if (def.provider === 'builtin')
      throw new AppError(
        'INVALID_STATE',
        `Session ${sessionId} talks to ${session.actor}, which is not an LLM actor: only an LLM actor's sessions are compacted`,
        {
          details: { sessionId, actor: session.actor },
          hint: 'a built-in actor keeps no model window; compaction is for sessions with an LLM actor',
        },
      );
    const llm = this.deps.llm;
    if (!llm)
      throw new AppError('INVALID_STATE', 'This agent runs no LLM providers: there is no model to write a summary', {
        details: { sessionId },
      });
    const stored = await this.deps.tasks.listByContext(sessionId, HISTORY_TURNS);
    const transcripts = await llm.transcripts.forContext(
      sessionId,
      stored.map((s) => s.task.id),
    );
    const history = sessionHistory(stored, transcripts);
    const keep = opts.keepTurns ?? def.compaction?.keepTurns ?? COMPACTION_DEFAULTS.keepTurns;
    const pick = turnsToCompact(history, keep);
    if (pick.length === 0)
      throw new AppError(
        'INVALID_STATE',
        `Nothing to compact in session ${sessionId}: ${history.turns.length} turn${history.turns.length === 1 ? '' : 's'} since the last compaction, and the newest ${keep} are kept as they are`,
        {
          details: { sessionId, turns: history.turns.length, keepTurns: keep },
          hint: 'keep fewer turns (--keep N), or compact after more turns',
        },
      );
    const signal = opts.signal ?? new AbortController().signal;
    const { task } = await this.summarise(session, session.actor, def, history, pick, {
      signal,
      onDemand: true,
      spender: principal.id,
    });
    return { task: viewTask(task, { includeArtifacts: true }), compacted: pick.length };
  }

  /**
   * Summarises the previous summary and `pick` with the summariser's model and stores the
   * compaction task. A failure of the model is an AppError (UNAVAILABLE, or INVALID_STATE when
   * the summariser cannot run).
   */
  private async summarise(
    session: Session,
    actorName: string,
    def: ActorDefinition,
    history: SessionHistory,
    pick: HistoryTurn[],
    how: { signal: AbortSignal; onDemand?: boolean; spender?: string | undefined },
  ): Promise<{ task: Task; record: CompactionRecord }> {
    const { signal, onDemand = false } = how;
    const llm = this.deps.llm;
    if (!llm) throw new AppError('INVALID_STATE', 'this agent runs no LLM providers');
    const { name, def: summariser } = await this.summariser(actorName, def);
    const key = await llm.keys.resolve(summariser);
    if (!key.present && namesApiKey(summariser))
      throw new AppError('INVALID_STATE', `No API key for the summariser ${name}: ${key.problem}`, {
        details: { actor: name },
        hint: 'give the summariser its key (see `agents actor show`)',
      });
    const prompt = await this.prompt(summariser, history.compaction, pick);
    let text = '';
    let usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
    try {
      for await (const ev of llm.models.stream({
        actor: summariser,
        apiKey: key.present ? key.key : undefined,
        system: SUMMARISER_SYSTEM,
        messages: [{ role: 'user', text: prompt }],
        tools: [],
        signal,
        spender: how.spender,
      })) {
        if (ev.type === 'text') text += ev.delta;
        else if (ev.type === 'finish') usage = ev.usage;
      }
    } catch (err) {
      if (!(err instanceof ProviderFailure)) throw err;
      throw new AppError('UNAVAILABLE', `The summariser ${name} failed: ${err.message}`, {
        details: { actor: name, kind: err.kind },
        hint: err.hint,
      });
    }
    if (text.trim() === '')
      throw new AppError('UNAVAILABLE', `The summariser ${name} answered with no text`, {
        details: { actor: name },
        hint: 'try again, or name another compaction.summarizer',
      });
    const covers = [...(history.compaction?.covers ?? []), ...pick.map((t) => t.task.id)];
    const task = this.compactionTask(session.id, covers, text.trim(), {
      actor: name,
      model: summariser.model,
      usage,
      newly: pick.length,
      onDemand,
    });
    await this.deps.tasks.create(task, session.owner);
    await this.deps.recordTask(session.id, task.status.timestamp ?? this.now().toISOString());
    return { task, record: { taskId: task.id, covers, summary: text.trim() } };
  }

  /** The actor that writes the summary: `compaction.summarizer`, else the actor itself. */
  private async summariser(actorName: string, def: ActorDefinition): Promise<{ name: string; def: ActorDefinition }> {
    const name = def.compaction?.summarizer;
    if (!name || name === actorName) return { name: actorName, def };
    const found = await this.deps.actor(name);
    if (!found || found.provider === 'builtin')
      throw new AppError(
        'INVALID_STATE',
        found
          ? `The summariser ${name} of ${actorName} is a built-in actor: a summary needs an LLM actor`
          : `The summariser ${name} of ${actorName} no longer exists`,
        { details: { actor: actorName, summarizer: name }, hint: `change compaction.summarizer of ${actorName}` },
      );
    return { name, def: found };
  }

  /**
   * The summariser's request within its window: the newest turns that fit (the previous summary
   * always), older ones left out with a note when they do not.
   */
  private async prompt(
    summariser: ActorDefinition,
    previous: CompactionRecord | undefined,
    pick: readonly HistoryTurn[],
  ): Promise<string> {
    const tokens = (this.deps.llm as NonNullable<CompactionDeps['llm']>).tokens;
    const window = summariser.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
    const reserve = Math.min(summariser.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens, Math.floor(window / 2));
    const budget = window - reserve - (await tokens.count(SUMMARISER_SYSTEM));
    const texts = pick.map(turnText);
    let used = await tokens.count(summariserPrompt(previous, [], 0));
    let from = texts.length;
    while (from > 0) {
      const n = (await tokens.count(texts[from - 1] ?? '')) + 8;
      if (used + n > budget && from < texts.length) break;
      used += n;
      from--;
    }
    return summariserPrompt(previous, texts.slice(from), from);
  }

  private compactionTask(
    contextId: string,
    covers: string[],
    summary: string,
    by: { actor: string; model: string; usage: ModelUsage; newly: number; onDemand: boolean },
  ): Task {
    const id = newId();
    const at = this.now().toISOString();
    const meta: CompactionMeta = {
      kind: 'compaction',
      covers,
      turns: covers.length,
      actor: by.actor,
      model: by.model,
      inputTokens: by.usage.inputTokens,
      outputTokens: by.usage.outputTokens,
    };
    const said = `compaction: ${covers.length} turn${covers.length === 1 ? '' : 's'} summarised (${by.newly} new${by.onDemand ? ', on demand' : ''})`;
    return {
      id,
      contextId,
      status: {
        state: 'TASK_STATE_COMPLETED',
        timestamp: at,
        message: { messageId: newId(), role: 'ROLE_AGENT', taskId: id, contextId, parts: [{ text: said }] },
      },
      artifacts: [{ artifactId: SUMMARY_ARTIFACT, name: SUMMARY_ARTIFACT, parts: [{ text: summary }] }],
      metadata: { cleveragents: { ...meta, trigger: by.onDemand ? 'on-demand' : 'automatic' } },
    };
  }
}
