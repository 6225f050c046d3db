/**
 * What a session's history is once some of it was compacted: the newest compaction task's summary
 * stands in for the turns it covers, the other turns are sent as they are. A compaction is a
 * completed task of the session (`metadata.cleveragents.kind = 'compaction'`, a `summary`
 * artifact); the turns it covers stay stored, untouched.
 */
import { isTerminal, textOf, type Task } from '../../domain/a2a.model.ts';
import type { ModelMessage } from '../ports/language-model.port.ts';
import type { StoredTask } from '../ports/task.repository.port.ts';
import type { Transcript } from '../ports/transcript.port.ts';
import { priorTurn } from '../actors/llm/history.ts';

/** The artifact holding a compaction's summary. */
export const SUMMARY_ARTIFACT = 'summary';

/** What `metadata.cleveragents` of a compaction task says. */
export interface CompactionMeta {
  kind: 'compaction';
  /** The turns the summary stands in for (task ids, oldest first). */
  covers: string[];
  /** covers.length. */
  turns: number;
  /** The actor whose model wrote the summary. */
  actor: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** A compaction as the next turn uses it. */
export interface CompactionRecord {
  taskId: string;
  covers: string[];
  summary: string;
}

/** An earlier turn of the session, as model messages. */
export interface HistoryTurn {
  task: Task;
  messages: ModelMessage[];
}

export interface SessionHistory {
  /** The earlier turns no compaction covers, oldest first (with or without messages). */
  turns: HistoryTurn[];
  /** The newest compaction, if any. */
  compaction?: CompactionRecord | undefined;
}

/** The compaction a task records, if it is one. */
export function compactionOf(task: Task): CompactionRecord | undefined {
  const meta = task.metadata?.['cleveragents'] as Partial<CompactionMeta> | undefined;
  if (typeof meta !== 'object' || meta === null || meta.kind !== 'compaction' || !Array.isArray(meta.covers))
    return undefined;
  const summary = (task.artifacts ?? [])
    .filter((a) => a.artifactId === SUMMARY_ARTIFACT)
    .map((a) => textOf(a.parts))
    .join('');
  return { taskId: task.id, covers: meta.covers.filter((c): c is string => typeof c === 'string'), summary };
}

/**
 * The history of a session's stored tasks (oldest first) without `exclude` (the turn being
 * answered): the compaction covering most turns (a later one covers an earlier one's turns too)
 * and the turns it does not cover.
 */
export function sessionHistory(
  stored: readonly StoredTask[],
  transcripts: ReadonlyMap<string, Transcript>,
  exclude?: string,
): SessionHistory {
  let compaction: CompactionRecord | undefined;
  const others: Task[] = [];
  for (const { task } of stored) {
    if (task.id === exclude) continue;
    const c = compactionOf(task);
    if (!c) others.push(task);
    else if (!compaction || c.covers.length >= compaction.covers.length) compaction = c;
  }
  const covered = new Set(compaction?.covers ?? []);
  const turns = others
    .filter((t) => !covered.has(t.id))
    .map((task) => ({ task, messages: priorTurn(task, transcripts.get(task.id)) }));
  return { turns, ...(compaction ? { compaction } : {}) };
}

/**
 * The turns a compaction that keeps the newest `keepTurns` would summarise: the older finished
 * ones (a turn still waiting for an answer stays as it is).
 */
export function turnsToCompact(history: SessionHistory, keepTurns: number): HistoryTurn[] {
  const older = history.turns.slice(0, Math.max(0, history.turns.length - keepTurns));
  return older.filter((t) => isTerminal(t.task.status.state));
}

/** The history after `record` (which covers `newly`) replaced those turns. */
export function withCompaction(history: SessionHistory, record: CompactionRecord): SessionHistory {
  const covered = new Set(record.covers);
  return { turns: history.turns.filter((t) => !covered.has(t.task.id)), compaction: record };
}

/** Task ids as a sentence part: all of them when few, else the first and last few. */
function idList(ids: readonly string[]): string {
  if (ids.length <= 12) return ids.join(', ');
  return `${ids.slice(0, 5).join(', ')}, … (${ids.length - 10} more) …, ${ids.slice(-5).join(', ')}`;
}

/** What the system prompt says of a compaction: what was summarised, then the summary. */
export function compactionSection(c: CompactionRecord | undefined): string {
  if (!c) return '';
  const n = c.covers.length;
  return [
    `Earlier in this session ${n} turn${n === 1 ? ' was' : 's were'} compacted into a summary (compaction task ${c.taskId}; summarised turns: ${idList(c.covers)}). The conversation you see continues after them; this summary stands in for them:`,
    '<summary>',
    c.summary,
    '</summary>',
  ].join('\n');
}

/** A tool result or argument text cut for the summariser. */
const cut = (s: string, n: number): string =>
  s.length > n ? `${s.slice(0, n)} … (${s.length - n} more characters)` : s;

/** A turn written out as plain text for the summariser. */
export function turnText(turn: HistoryTurn): string {
  const lines: string[] = [];
  for (const m of turn.messages) {
    if (m.role === 'user') lines.push(`User: ${m.text}`);
    else if (m.role === 'assistant') {
      if (m.text) lines.push(`Assistant: ${m.text}`);
      for (const c of m.toolCalls ?? []) lines.push(`Assistant called ${c.name} with ${cut(c.arguments, 500)}`);
    } else
      for (const r of m.results)
        lines.push(`Result of ${r.name}${r.isError ? ' (error)' : ''}: ${cut(r.output, 1500)}`);
  }
  if (lines.length === 0) lines.push(`(a turn that ended ${turn.task.status.state} without words)`);
  return lines.join('\n');
}

/** What the summariser is told to do. */
export const SUMMARISER_SYSTEM = [
  'You write the summary of a conversation between a user and an assistant, so that the assistant can continue it without the original turns.',
  'Keep what matters for going on: what the user wants and prefers, decisions made, facts learned (names, values, file paths, commands and their results), work done and work still open.',
  'Be concise and specific. Write plain text, in the third person; do not address the user and do not add anything that was not said.',
].join(' ');

/** The summariser's request: the previous summary (if any), then the turns to add, oldest first. */
export function summariserPrompt(
  previous: CompactionRecord | undefined,
  turns: readonly string[],
  left: number,
): string {
  const parts: string[] = [];
  if (previous)
    parts.push(
      `The summary so far (of ${previous.covers.length} earlier turn${previous.covers.length === 1 ? '' : 's'}):\n<summary>\n${previous.summary}\n</summary>`,
    );
  if (left > 0) parts.push(`(${left} older turn${left === 1 ? ' is' : 's are'} too long to show here and left out.)`);
  parts.push(`The turns to add, oldest first:\n\n${turns.map((t, i) => `--- turn ${i + 1} ---\n${t}`).join('\n\n')}`);
  parts.push(
    previous
      ? 'Write the updated summary: the summary so far with these turns folded in.'
      : 'Write the summary of these turns.',
  );
  return parts.join('\n\n');
}
