/**
 * What a chat turn tells its model and keeps on its task, apart from the loop: the system prompt,
 * the project's context (ContextProvider.chatContext: instruction files and a repository map by
 * default, the default view's files in `full` mode), the usage, and an answer read from a message.
 */
import { textOf, type Message } from '../../../domain/a2a.model.ts';
import { LLM_ACTOR_DEFAULTS, type ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import type { ChatContextMode } from '../../../domain/session.ts';
import type { ChatContext, ContextProvider } from '../../context/context.types.ts';
import type { Logger } from '../../ports/logger.port.ts';
import type { Transcript } from '../../ports/transcript.port.ts';
import type { ChatToolSet } from './chat-toolbox.service.ts';
import type { ModelCandidates } from './model-candidates.service.ts';
import { costOf } from './tool-args.ts';
import { messageOf } from '../../../domain/errors.ts';

/** Usage as kept on the task (`metadata.usage`). */
export interface TurnUsage {
  /** The actor whose model answered (a fallback's, after a fallback). */
  actor: string;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Of the input, read from and written to the provider's prompt cache (absent: none reported). */
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  steps: number;
  toolCalls: number;
  cost?: { amount: number; currency: string } | undefined;
}

/** The turn's usage for `metadata.usage`: the model that answered, its tokens (cache reads and writes too) and cost. */
export function turnUsage(
  t: Transcript,
  candidates: ModelCandidates | undefined,
  actor: { name: string; def: ActorDefinition },
): TurnUsage {
  const u = t.usage;
  const answering = candidates?.current ?? actor;
  const out: TurnUsage = {
    actor: answering.name,
    provider: answering.def.provider,
    model: answering.def.model,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    ...(u.cacheReadTokens ? { cacheReadTokens: u.cacheReadTokens } : {}),
    ...(u.cacheWriteTokens ? { cacheWriteTokens: u.cacheWriteTokens } : {}),
    steps: t.steps,
    toolCalls: t.toolCalls,
  };
  const cost = candidates ? candidates.cost(u) : costOf(actor.def.prices, u, actor.def.provider);
  if (cost) out.cost = cost;
  return out;
}

/** The system prompt: the actor's, its skills' instructions, where the files are, what is unavailable. */
export function chatSystemPrompt(def: ActorDefinition, tools: ChatToolSet): string {
  const parts = [def.systemPrompt ?? '', ...tools.instructions];
  const ws = tools.workspace;
  if (ws)
    parts.push(
      `You work on the project ${ws.project}: file paths are relative to the root of its resource ${ws.resource}.`,
    );
  if (tools.problems.length > 0) parts.push(`Unavailable in this turn: ${tools.problems.join('; ')}.`);
  return parts.filter((p) => p.trim() !== '').join('\n\n');
}

/**
 * What the turn is given of the session's project: by default its instruction files and a ranked
 * repository map — the model reads the rest with its tools — or, for a session in `full` mode, the
 * files the default view selects. Empty without a project or a context service. A failure is told
 * to the model and logged, and the turn goes on without.
 */
export async function chatProjectContext(
  deps: { context?: ContextProvider | undefined; logger: Logger },
  t: ProjectContextTurn,
): Promise<string> {
  return (await chatProjectContextOf(deps, t)).text;
}

/** What {@link chatProjectContext} reads of a turn. */
export interface ProjectContextTurn {
  project: string | undefined;
  mode: ChatContextMode | undefined;
  message: Message;
  def: ActorDefinition;
  signal: AbortSignal;
}

/**
 * {@link chatProjectContext} with what was assembled (absent: no project or context service, or
 * it failed — `problem` then says why, as the text tells the model); `session/context` shows it.
 */
export async function chatProjectContextOf(
  deps: { context?: ContextProvider | undefined; logger: Logger },
  t: ProjectContextTurn,
): Promise<{ text: string; context?: ChatContext; problem?: string }> {
  const { project, signal } = t;
  const context = deps.context;
  if (!project || !context) return { text: '' };
  try {
    const c = await context.chatContext({
      project,
      mode: t.mode ?? 'map',
      goal: textOf(t.message.parts),
      modelWindow: t.def.contextWindow ?? LLM_ACTOR_DEFAULTS.contextWindow,
      answerReserve: t.def.maxTokens ?? LLM_ACTOR_DEFAULTS.maxTokens,
      signal,
    });
    return { text: c.text, context: c };
  } catch (err) {
    if (signal.aborted) throw err;
    deps.logger.warn({ err, project }, 'the context of a chat turn could not be assembled');
    const problem = messageOf(err);
    return { text: `The files of project ${project} could not be selected for this turn: ${problem}.`, problem };
  }
}

/** The answer's text and its `approval` data part, if any. */
export function answerOf(m: Message): { text?: string; approval?: unknown } {
  const data = m.parts.find(
    (p) => p.data !== undefined && typeof p.data === 'object' && p.data !== null && 'approval' in p.data,
  )?.data as { approval?: unknown } | undefined;
  return data ? { approval: data.approval } : { text: textOf(m.parts) };
}
