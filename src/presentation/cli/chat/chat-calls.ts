/**
 * What the chat commands ask the agent — once, for every front end that offers them (`agents
 * chat`, the TUI, the ACP bridge), so that `/model`, `/undo`, `/diff`, `/compact`, `/cost`, `/tools`
 * and `/context` cannot drift apart between them; each front end only words the answer its way.
 * A refusal of the agent is thrown (an A2AClientError) for the front end to show.
 */
import {
  actorRegistry,
  sessionCompact,
  sessionContext,
  sessionDiff,
  sessionShow,
  sessionUndo,
  sessionUpdate,
  type A2AClient,
  type ResultOf,
  type Session,
  type UndoOutcome,
} from '../../../protocol/client/index.ts';
import { sessionCost, type SessionCost } from '../render/chat-commands.render.ts';
import { compactionLine, compactionOf } from '../render/compaction.render.ts';
import { qualify } from '../render/definition.render.ts';

/** How many of the caller's actors `/model` lists (`agents actor list` shows them all). */
const ACTORS_SHOWN = 50;
/** The turns `/cost` sums (session/show's limit). */
const COST_TURNS = 1000;

const opts = (signal: AbortSignal | undefined): { signal?: AbortSignal } => (signal ? { signal } : {});

/** The methods the chat commands call (each front end declares them). */
export const CHAT_CALLS = [
  actorRegistry.list,
  sessionUpdate,
  sessionUndo,
  sessionDiff,
  sessionCompact,
  sessionShow,
  sessionContext,
] as const;

export type SessionDiffView = ResultOf<typeof sessionDiff>;
export type ContextPreview = ResultOf<typeof sessionContext>;

/** `/model`: the actors the caller can switch to (the first ones), and how many more there are. */
export async function actorChoices(
  client: A2AClient,
  signal?: AbortSignal,
): Promise<{ names: string[]; more: number }> {
  const page = await client.call(actorRegistry.list, { pageSize: ACTORS_SHOWN }, opts(signal));
  return { names: page.items.map((a) => a.name), more: page.totalSize - page.items.length };
}

/** `/model <actor>`: the session with its next turns going to that actor (`coder` is `local/coder`). */
export function switchActor(
  client: A2AClient,
  sessionId: string,
  actor: string,
  signal?: AbortSignal,
): Promise<Session> {
  return client.call(sessionUpdate, { sessionId, actor: qualify(actor) }, opts(signal));
}

/** `/undo [turn] [--force]`. */
export function undoTurns(
  client: A2AClient,
  sessionId: string,
  args: { turn?: number; force: boolean },
  signal?: AbortSignal,
): Promise<UndoOutcome> {
  const params = {
    sessionId,
    ...(args.turn !== undefined ? { turn: args.turn } : {}),
    ...(args.force ? { force: true } : {}),
  };
  return client.call(sessionUndo, params, opts(signal));
}

/** `/diff [turn]`. */
export function sessionChanges(
  client: A2AClient,
  sessionId: string,
  args: { turn?: number },
  signal?: AbortSignal,
): Promise<SessionDiffView> {
  return client.call(sessionDiff, { sessionId, ...(args.turn !== undefined ? { turn: args.turn } : {}) }, opts(signal));
}

/** `/compact [keep]`: the compaction, with its one-line account and the summary when there is one. */
export async function compactNow(
  client: A2AClient,
  sessionId: string,
  args: { keepTurns?: number },
  signal?: AbortSignal,
): Promise<{ result: ResultOf<typeof sessionCompact>; line: string; summary?: string }> {
  const params = { sessionId, ...(args.keepTurns !== undefined ? { keepTurns: args.keepTurns } : {}) };
  const result = await client.call(sessionCompact, params, opts(signal));
  const view = compactionOf(result.task);
  const line = view ? compactionLine(view) : `compaction: ${result.compacted} turns summarised`;
  return { result, line, ...(view?.summary ? { summary: view.summary } : {}) };
}

/** `/cost`: the tokens and cost of the session's turns, summed. */
export async function costSoFar(client: A2AClient, sessionId: string, signal?: AbortSignal): Promise<SessionCost> {
  const shown = await client.call(sessionShow, { sessionId, turns: COST_TURNS }, opts(signal));
  return sessionCost(shown.tasks);
}

/** `/tools` and `/context`: what the next turn would send. */
export function nextTurnPreview(client: A2AClient, sessionId: string, signal?: AbortSignal): Promise<ContextPreview> {
  return client.call(sessionContext, { sessionId }, opts(signal));
}
