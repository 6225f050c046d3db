import type { Task } from '../../../protocol/client/index.ts';
import { partsText } from './task.render.ts';

/** A compaction task of a session, as `metadata.cleveragents` and its `summary` artifact say. */
export interface CompactionView {
  covers: string[];
  turns: number;
  actor?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  summary: string;
}

export function compactionOf(task: Task): CompactionView | undefined {
  const meta = task.metadata?.['cleveragents'];
  if (!meta || typeof meta !== 'object') return undefined;
  const m = meta as Partial<CompactionView> & { kind?: unknown };
  if (m.kind !== 'compaction' || !Array.isArray(m.covers)) return undefined;
  const summary = (task.artifacts ?? [])
    .filter((a) => a.artifactId === 'summary')
    .map((a) => partsText(a.parts))
    .join('');
  return { ...m, covers: m.covers, turns: typeof m.turns === 'number' ? m.turns : m.covers.length, summary };
}

/** `compaction: 12 turns summarised by local/gpt (fake-model) · 300 in / 50 out tokens`. */
export function compactionLine(c: CompactionView): string {
  const by = c.actor ? ` by ${c.actor}${c.model ? ` (${c.model})` : ''}` : '';
  const usage =
    c.inputTokens !== undefined && c.outputTokens !== undefined
      ? ` · ${c.inputTokens} in / ${c.outputTokens} out tokens`
      : '';
  return `compaction: ${c.turns} turn${c.turns === 1 ? '' : 's'} summarised${by}${usage}`;
}

/** The compaction whose summary a turn's prompt carried (`metadata.context.compaction`), if any. */
export function usedCompactionOf(task: Task): { taskId: string; covers: string[] } | undefined {
  const ctx = task.metadata?.['context'];
  const c = ctx && typeof ctx === 'object' ? (ctx as { compaction?: unknown }).compaction : undefined;
  if (!c || typeof c !== 'object') return undefined;
  const v = c as { taskId?: unknown; covers?: unknown };
  return typeof v.taskId === 'string' && Array.isArray(v.covers)
    ? { taskId: v.taskId, covers: v.covers as string[] }
    : undefined;
}
