/**
 * The context's budget: how many tokens of file text a view may give, from the query, the view,
 * or the model's window minus the reserves.
 */
import {
  VIEW_PARENT,
  type ContextView,
  type EffectiveContextSettings,
  type ProjectContextSettings,
} from '../../domain/context/context.ts';
import { LLM_ACTOR_DEFAULTS } from '../../domain/registry/actor.definition.ts';
import { ownSettings } from './context-settings.ts';
import type { ContextBudget } from './context.types.ts';

/** What the budget depends on besides the settings. */
export interface BudgetTarget {
  view: ContextView;
  /** Tokens asked for by the query (overrides the view's). */
  budget?: number | undefined;
  modelWindow?: number | undefined;
  answerReserve?: number | undefined;
}

/** The most of a model's window each built-in reserve takes (a view's own reserve is taken as it is). */
export const DEFAULT_RESERVE_SHARE = { system: 0.1, history: 0.25, answer: 0.25 } as const;

/**
 * Tokens of file text allowed: the query's budget, else the view's tokenBudget, else the model's
 * window minus the reserves. The answer reserve is the view's when a view sets it, else the
 * actor's answer size (maxTokens), else the built-in one.
 */
export function budgetOf(
  ctx: ProjectContextSettings | undefined,
  t: BudgetTarget,
  s: EffectiveContextSettings,
): Omit<ContextBudget, 'used'> {
  const viewSets = (k: keyof EffectiveContextSettings['reserves']): boolean => {
    for (let v: ContextView | undefined = t.view; v !== undefined; v = VIEW_PARENT[v])
      if (ownSettings(ctx, v).reserves?.[k] !== undefined) return true;
    return false;
  };
  const modelWindow = t.modelWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
  // A reserve no view sets is the built-in one, but never more than its share of a small window.
  const share = (k: keyof EffectiveContextSettings['reserves'], value: number, part: number): number =>
    viewSets(k) ? s.reserves[k] : Math.min(value, Math.floor(modelWindow * part));
  const reserves = {
    system: share('system', s.reserves.system, DEFAULT_RESERVE_SHARE.system),
    history: share('history', s.reserves.history, DEFAULT_RESERVE_SHARE.history),
    // The actor's own maxTokens is its answer reserve as it is.
    answer:
      t.answerReserve !== undefined && !viewSets('answer')
        ? t.answerReserve
        : share('answer', s.reserves.answer, DEFAULT_RESERVE_SHARE.answer),
  };
  if (t.budget !== undefined) return { modelWindow, reserves, available: t.budget, source: 'override' };
  if (s.tokenBudget !== undefined) return { modelWindow, reserves, available: s.tokenBudget, source: 'view' };
  const available = Math.max(0, modelWindow - reserves.system - reserves.history - reserves.answer);
  return { modelWindow, reserves, available, source: 'window' };
}
