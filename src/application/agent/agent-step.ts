/**
 * One model step of the agent loop, streamed: the text goes out as it arrives and the tool calls are
 * collected. The budget is asked on every delta with the step's tokens so far (the prompt as counted,
 * the output estimated from its length); a spent budget — or the wall-clock budget's timer — aborts
 * the provider request there and then, and the step returns what was streamed with the stop.
 */
import {
  ProviderFailure,
  type FinishReason,
  type ModelRequest,
  type ModelToolCall,
  type ModelUsage,
} from '../ports/language-model.port.ts';
import type { AgentBudget, AgentModel, BudgetStop } from './agent.types.ts';

export interface StepResult {
  text: string;
  calls: ModelToolCall[];
  reason: FinishReason;
  /** As the provider reported it; estimated when the step was stopped before it did. */
  usage: ModelUsage;
  /** The budget that stopped the step mid-stream. */
  stop?: BudgetStop | undefined;
}

/** Characters per token, for the running estimate of a streamed answer (the provider's count replaces it). */
const CHARS_PER_TOKEN = 4;

export async function streamStep(s: {
  model: AgentModel;
  request: Omit<ModelRequest, 'actor' | 'apiKey' | 'signal'>;
  promptTokens: number;
  budget: AgentBudget;
  signal: AbortSignal;
  onText(delta: string): Promise<void>;
}): Promise<StepResult> {
  const ctl = new AbortController();
  const forward = (): void => ctl.abort(s.signal.reason);
  if (s.signal.aborted) forward();
  else s.signal.addEventListener('abort', forward, { once: true });
  let stop: BudgetStop | undefined;
  let timedOut = false;
  const ms = s.budget.remainingMs?.();
  const timer =
    ms === undefined
      ? undefined
      : setTimeout(
          () => {
            timedOut = true;
            ctl.abort();
          },
          Math.max(0, ms),
        );
  let text = '';
  const calls: ModelToolCall[] = [];
  let reason: FinishReason = 'other';
  let usage: ModelUsage | undefined;
  const estimate = (): ModelUsage => ({
    inputTokens: s.promptTokens,
    outputTokens: Math.ceil((text.length + calls.reduce((n, c) => n + c.arguments.length, 0)) / CHARS_PER_TOKEN),
  });
  try {
    for await (const ev of s.model.stream({ ...s.request, signal: ctl.signal })) {
      if (ev.type === 'text') {
        if (ev.delta === '') continue;
        text += ev.delta;
        await s.onText(ev.delta);
        stop = s.budget.duringStep?.(estimate());
        if (stop) break;
      } else if (ev.type === 'tool-call') {
        calls.push(ev.call);
        stop = s.budget.duringStep?.(estimate());
        if (stop) break;
      } else {
        reason = ev.reason;
        usage = ev.usage;
      }
    }
  } catch (err) {
    // Our own abort (a budget's timer) is a stop, not a failure; the caller's is a cancel.
    if (!(timedOut && !s.signal.aborted && err instanceof ProviderFailure && err.kind === 'cancelled')) throw err;
  } finally {
    if (timer) clearTimeout(timer);
    s.signal.removeEventListener('abort', forward);
    if (stop) ctl.abort();
  }
  if (timedOut && !stop)
    stop = s.budget.beforeStep?.() ?? { budget: 'wall', message: 'the wall-clock budget is spent' };
  const used = usage ?? estimate();
  s.budget.afterStep(used);
  return { text, calls: stop ? [] : calls, reason, usage: used, ...(stop ? { stop } : {}) };
}
