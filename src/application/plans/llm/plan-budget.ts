/**
 * A plan's budgets as the agent loop's AgentBudget: tool calls and wall time before each call, all
 * of them before each model step, and — while the model streams — tokens and cost with the step's
 * running estimate, so a spent budget aborts the request mid-answer; the wall-clock budget's rest
 * is the step's deadline. Each step's usage (reported, or estimated when stopped) is the plan's.
 */
import type { Plan, PlanError } from '../../../domain/plan/plan.ts';
import { budgetExceeded } from '../../../domain/plan/plan.ts';
import { countModelUsage } from '../../../domain/plan/plan-progress.ts';
import type { ModelUsage } from '../../ports/language-model.port.ts';
import type { AgentBudget, BudgetStop } from '../../agent/agent.types.ts';

export class PlanBudget implements AgentBudget {
  /** The plan error of the last stop (the phase stops `constrained` with it). */
  error: PlanError | undefined;

  private readonly plan: Plan;
  private readonly tick: () => void;
  private readonly cost: (usage: ModelUsage) => number | undefined;

  /** `cost`: a step's cost at the prices of the model that answered (undefined: it has none). */
  constructor(plan: Plan, tick: () => void, cost: (usage: ModelUsage) => number | undefined) {
    this.plan = plan;
    this.tick = tick;
    this.cost = cost;
  }

  /** A model that has used all its tool calls may still answer (and finish): only the others count. */
  beforeStep(): BudgetStop | undefined {
    this.tick();
    const { id, budget, usage } = this.plan;
    return this.stop(
      budgetExceeded({
        id,
        budget,
        usage: { ...usage, toolCalls: Math.min(usage.toolCalls, budget.maxToolCalls - 1) },
      }),
    );
  }

  beforeCall(): BudgetStop | undefined {
    this.tick();
    return this.stop(budgetExceeded(this.plan));
  }

  duringStep(estimate: ModelUsage): BudgetStop | undefined {
    const { id, budget, usage } = this.plan;
    const tokens = usage.tokens + estimate.inputTokens + estimate.outputTokens;
    const costUsd = usage.costUsd + (this.cost(estimate) ?? 0);
    const overTokens = budget.maxTokens !== undefined && tokens > budget.maxTokens;
    const overCost = budget.maxCost !== undefined && costUsd > budget.maxCost;
    if (!overTokens && !overCost) return undefined;
    return this.stop(
      budgetExceeded({
        id,
        budget: { ...budget, maxToolCalls: Number.MAX_SAFE_INTEGER, maxWallMs: Number.MAX_SAFE_INTEGER },
        usage: { ...usage, tokens, costUsd: Math.round(costUsd * 1e6) / 1e6 },
      }),
    );
  }

  remainingMs(): number | undefined {
    this.tick();
    return Math.max(0, this.plan.budget.maxWallMs - this.plan.usage.wallMs);
  }

  afterStep(usage: ModelUsage): void {
    countModelUsage(this.plan, usage.inputTokens + usage.outputTokens, this.cost(usage));
    this.tick();
  }

  private stop(error: PlanError | undefined): BudgetStop | undefined {
    if (!error) return undefined;
    this.error = error;
    return { budget: 'plan', message: error.message };
  }
}
