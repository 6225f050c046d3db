import type { LanguageModels, ModelEvent, ModelRequest } from '../ports/language-model.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { UsageLedger } from '../ports/quota.port.ts';

const HOUR_MS = 3_600_000;
/** How long a step's tokens are kept: the day a limit reads, and a day more for a clock's drift. */
const KEEP_MS = 2 * 86_400_000;

export interface UsageMeterDeps {
  ledger: UsageLedger;
  logger: Logger;
  now?: () => number;
}

/**
 * Counts model tokens toward per-user limits where every model call passes — chat turns, plan
 * phases and compaction alike: each step's reported usage is written to the ledger under the
 * request's `spender` (who sent the message or started the phase) before the step's `finish`
 * reaches the caller, so the next turn's check sees it. A step that reports no usage (cut off,
 * cancelled) adds nothing. A failed write is logged and the step goes on: a database blip does
 * not throw away an answer the user already paid for.
 */
export class UsageMeter {
  private readonly deps: UsageMeterDeps;
  private readonly now: () => number;
  private prunedAt = -Infinity;

  constructor(deps: UsageMeterDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /** `models`, with each step's tokens recorded for its spender. */
  models(models: LanguageModels): LanguageModels {
    return {
      stream: (req) => this.metered(models, req),
      check: (actor, apiKey, signal, access) => models.check(actor, apiKey, signal, access),
    };
  }

  private async *metered(models: LanguageModels, req: ModelRequest): AsyncGenerator<ModelEvent> {
    for await (const ev of models.stream(req)) {
      if (ev.type === 'finish' && req.spender !== undefined)
        await this.record(req.spender, ev.usage.inputTokens + ev.usage.outputTokens);
      yield ev;
    }
  }

  private async record(user: string, tokens: number): Promise<void> {
    if (!(tokens > 0)) return;
    const now = this.now();
    try {
      await this.deps.ledger.record(user, tokens, new Date(now).toISOString());
    } catch (err) {
      this.deps.logger.warn({ err, user, tokens }, "recording a model step's tokens failed; they do not count");
    }
    this.pruneIfDue(now);
  }

  /** At most once an hour per process, the rows no limit reads any more go (in the background, contained). */
  private pruneIfDue(now: number): void {
    if (now - this.prunedAt < HOUR_MS) return;
    this.prunedAt = now;
    this.deps.ledger
      .prune(new Date(now - KEEP_MS).toISOString())
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'pruning old model usage failed; tried again later'));
  }
}
