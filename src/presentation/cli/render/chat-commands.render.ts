/**
 * What the chat commands take and say, for every front end that offers them (`agents chat`, the
 * TUI, the ACP bridge): the parse of `/compact`'s and `/diff`'s arguments, and the session's
 * tokens and cost summed for `/cost`.
 */
import type { Task } from '../../../protocol/client/index.ts';
import { compactionOf } from './compaction.render.ts';
import { usageLine, usageOf, type UsageView } from './task.render.ts';

/** `/compact [keep]`'s argument: how many of the newest turns stay as they are (0-50), or what is wrong. */
export function parseCompactArgs(args: readonly string[]): { keepTurns?: number } | string {
  const [keep, ...rest] = args;
  const keepTurns = keep === undefined ? undefined : Number(keep);
  if (
    rest.length > 0 ||
    (keepTurns !== undefined && !(Number.isInteger(keepTurns) && keepTurns >= 0 && keepTurns <= 50))
  )
    return `/compact takes one number of turns to keep (0-50), not "${args.join(' ')}"`;
  return keepTurns !== undefined ? { keepTurns } : {};
}

/** Whether a word is a turn number (1, 2, …) rather than an id. */
export const isTurnNumber = (word: string): boolean => /^[1-9]\d{0,8}$/.test(word);

/** `/diff [turn]`'s argument: one turn's changes, or all the session's; or what is wrong. */
export function parseDiffArgs(args: readonly string[]): { turn?: number } | string {
  const [arg, ...rest] = args;
  if (rest.length > 0 || (arg !== undefined && !isTurnNumber(arg))) return '/diff takes at most a turn number';
  return arg !== undefined ? { turn: Number(arg) } : {};
}

/** The tokens and cost of a session's turns, summed. */
export interface SessionCost {
  turns: number;
  /** Turns that reported usage. */
  measured: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** Summed per currency. */
  cost: { amount: number; currency: string }[];
  /** Turns whose model reported tokens but no cost. */
  unpriced: number;
}

/** Sums each turn's `metadata.usage` (a compaction's tokens are its own metadata: counted too). */
export function sessionCost(tasks: readonly Task[]): SessionCost {
  const out: SessionCost = {
    turns: tasks.length,
    measured: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cost: [],
    unpriced: 0,
  };
  for (const t of tasks) {
    const u: UsageView | undefined = usageOf(t) ?? compactionUsage(t);
    if (!u) continue;
    out.measured++;
    out.inputTokens += u.inputTokens;
    out.outputTokens += u.outputTokens;
    out.cacheReadTokens += u.cacheReadTokens ?? 0;
    if (!u.cost) out.unpriced++;
    else {
      const same = out.cost.find((c) => c.currency === u.cost?.currency);
      if (same) same.amount += u.cost.amount;
      else out.cost.push({ ...u.cost });
    }
  }
  return out;
}

function compactionUsage(t: Task): UsageView | undefined {
  const c = compactionOf(t);
  return c?.inputTokens !== undefined && c.outputTokens !== undefined
    ? { inputTokens: c.inputTokens, outputTokens: c.outputTokens }
    : undefined;
}

/** `3 turns · 812 in / 96 out tokens · 0.0012 USD (1 turn's model reported no cost)`. */
export function costText(s: SessionCost): string {
  const turns = `${s.turns} turn${s.turns === 1 ? '' : 's'}`;
  if (s.measured === 0) return `${turns} · no token usage reported (the actor's model reports none)`;
  const usage = usageLine({
    inputTokens: s.inputTokens,
    outputTokens: s.outputTokens,
    ...(s.cacheReadTokens ? { cacheReadTokens: s.cacheReadTokens } : {}),
  });
  const cost = s.cost.map((c) => ` · ${c.amount.toFixed(4)} ${c.currency}`).join('');
  const unpriced =
    s.unpriced === 0
      ? ''
      : s.unpriced === s.measured
        ? ' · no cost (the actor has no prices)'
        : ` · ${s.unpriced} turn${s.unpriced === 1 ? "'s model" : "s' models"} reported no cost`;
  return `${turns} · ${usage}${cost}${unpriced}`;
}
