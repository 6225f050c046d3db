/**
 * An actor's model and its fallbacks (`fallbacks: [actor refs]`), tried in order: a model step that
 * fails with a rate limit, a server error, a timeout, a network failure or a missing model — after
 * the provider adapter's own retries, and before anything of the answer was streamed — goes to the
 * next usable fallback, and the later steps stay with it. A fallback that does not exist, is a
 * built-in actor or has no key is skipped. Each failure and skip is recorded (`fallbacks`), for the
 * task's metadata. Used by chat turns (LlmActor) and plan phases (PlanModel) alike.
 */
import { namesApiKey, type ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import { fallbackReason, type FallbackRecord } from '../../../domain/registry/fallbacks.ts';
import {
  ProviderFailure,
  type ApiKeys,
  type LanguageModels,
  type ModelEvent,
  type ModelRequest,
  type ModelUsage,
  type ProviderFailureKind,
} from '../../ports/language-model.port.ts';
import { costOf } from './tool-args.ts';

const TOKEN_KINDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const;
/** Tokens of each kind a price applies to (ModelUsage with every field counted). */
type Tally = Record<(typeof TOKEN_KINDS)[number], number>;

/** The failures a fallback answers for; the others (auth, bad request, window…) fail the step. */
export const FALLBACK_ON: ReadonlySet<ProviderFailureKind> = new Set<ProviderFailureKind>([
  'rate-limit',
  'server',
  'timeout',
  'network',
  'model-not-found',
]);

/** A model that can be asked: the actor, its definition and its key. */
export interface ModelCandidate {
  name: string;
  def: ActorDefinition;
  apiKey: string | undefined;
}

export interface ModelCandidatesDeps {
  models: LanguageModels;
  keys: ApiKeys;
  /** An actor's definition by name (undefined: there is none). */
  lookup(name: string): Promise<ActorDefinition | undefined>;
  /** Told after each fallback: every record so far, and a sentence saying who answers now. */
  onFallback?: ((records: FallbackRecord[], text: string) => Promise<void>) | undefined;
  /** Whose per-user limits the steps' tokens count toward (ModelRequest.spender; absent: nobody's). */
  spender?: string | undefined;
}

/** A step as the candidate gets it: everything but the actor and its key. */
export type CandidateRequest = Omit<ModelRequest, 'actor' | 'apiKey'>;

export class ModelCandidates {
  /** The failures and skips so far, oldest first. */
  readonly fallbacks: FallbackRecord[] = [];
  private readonly order: string[];
  private index = 0;
  private answering: ModelCandidate;
  /** Tokens each candidate used through this object, for their prices. */
  private readonly spent = new Map<string, { def: ActorDefinition } & Tally>();

  private readonly primary: ModelCandidate;
  private readonly deps: ModelCandidatesDeps;

  constructor(primary: ModelCandidate, deps: ModelCandidatesDeps) {
    this.primary = primary;
    this.deps = deps;
    this.order = [primary.name, ...(primary.def.fallbacks ?? [])];
    this.answering = primary;
  }

  /** The candidate the next step goes to. */
  get current(): ModelCandidate {
    return this.answering;
  }

  /**
   * Goes on where an earlier part of the same turn left off (a task answered after input-required):
   * its records, and the fallback that answered it when that is still usable.
   */
  async resume(earlier: readonly FallbackRecord[]): Promise<void> {
    this.fallbacks.push(...earlier);
    const last = earlier[earlier.length - 1]?.next;
    const at = last ? this.order.indexOf(last) : -1;
    if (at <= 0) return;
    const c = await this.usable(last as string);
    if ('def' in c) {
      this.index = at;
      this.answering = c;
    }
  }

  /** One model step with the current candidate, falling back (before anything was streamed) as needed. */
  async *stream(req: CandidateRequest): AsyncGenerator<ModelEvent> {
    for (;;) {
      const c = this.answering;
      let streamed = false;
      try {
        const step = { ...req, actor: c.def, apiKey: c.apiKey, spender: this.deps.spender };
        for await (const ev of this.deps.models.stream(step)) {
          if (ev.type === 'finish') this.spend(c, ev.usage);
          streamed = true;
          yield ev;
        }
        return;
      } catch (err) {
        const alone = this.order.length === 1;
        if (alone || streamed || req.signal.aborted || !(err instanceof ProviderFailure) || !FALLBACK_ON.has(err.kind))
          throw err;
        if (!(await this.advance(err))) throw this.exhausted(err);
      }
    }
  }

  /** The cost of `total` tokens: what each candidate used at its prices, the rest at the first one's. */
  cost(total: ModelUsage): { amount: number; currency: string } | undefined {
    const rest: Tally = {
      inputTokens: total.inputTokens,
      outputTokens: total.outputTokens,
      cacheReadTokens: total.cacheReadTokens ?? 0,
      cacheWriteTokens: total.cacheWriteTokens ?? 0,
    };
    const costs: Array<{ amount: number; currency: string } | undefined> = [];
    for (const s of this.spent.values()) {
      if (s.def === this.primary.def) continue;
      for (const k of TOKEN_KINDS) rest[k] -= s[k];
      costs.push(costOf(s.def.prices, s, s.def.provider));
    }
    for (const k of TOKEN_KINDS) rest[k] = Math.max(0, rest[k]);
    costs.push(costOf(this.primary.def.prices, rest, this.primary.def.provider));
    const priced = costs.filter((c) => c !== undefined);
    if (priced.length === 0) return undefined;
    const amount = priced.reduce((sum, c) => sum + c.amount, 0);
    return { amount: Math.round(amount * 1e6) / 1e6, currency: priced[0]?.currency ?? 'USD' };
  }

  private spend(c: ModelCandidate, usage: ModelUsage): void {
    const s = this.spent.get(c.name) ?? {
      def: c.def,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    };
    s.inputTokens += usage.inputTokens;
    s.outputTokens += usage.outputTokens;
    s.cacheReadTokens += usage.cacheReadTokens ?? 0;
    s.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    this.spent.set(c.name, s);
  }

  /** Moves to the next usable fallback (false: none is left), recording the failure and the skips. */
  private async advance(err: ProviderFailure): Promise<boolean> {
    const failed = this.answering;
    const skipped: Array<Omit<FallbackRecord, 'next'>> = [];
    let found: ModelCandidate | undefined;
    while (!found && ++this.index < this.order.length) {
      const name = this.order[this.index] as string;
      const c = await this.usable(name);
      if ('def' in c) found = c;
      else skipped.push({ actor: name, model: c.model, kind: 'skipped', message: c.skip });
    }
    const next = found?.name ?? null;
    this.fallbacks.push(
      {
        actor: failed.name,
        model: failed.def.model,
        kind: err.kind,
        ...(err.status !== undefined ? { status: err.status } : {}),
        message: err.message,
        next,
      },
      ...skipped.map((s) => ({ ...s, next })),
    );
    if (!found) return false;
    this.answering = found;
    // A copy: the event keeps the records as they were when it was sent.
    await this.deps.onFallback?.(
      this.fallbacks.map((r) => ({ ...r })),
      `${failed.name} failed (${fallbackReason({ kind: err.kind, status: err.status })}): ${found.name} answers instead`,
    );
    return true;
  }

  /** A fallback ready to be asked, or why it cannot be. */
  private async usable(name: string): Promise<ModelCandidate | { skip: string; model: string }> {
    const def = await this.deps.lookup(name);
    if (!def) return { skip: `there is no actor ${name}`, model: '' };
    if (def.provider === 'builtin')
      return { skip: `${name} is a built-in actor: it has no model to answer with`, model: def.model };
    const key = await this.deps.keys.resolve(def);
    if (!key.present && namesApiKey(def)) return { skip: `no API key for ${name}: ${key.problem}`, model: def.model };
    return { name, def, apiKey: key.present ? key.key : undefined };
  }

  /** The last failure, saying that the fallbacks were tried (or skipped) before it. */
  private exhausted(err: ProviderFailure): ProviderFailure {
    const why = this.fallbacks.map((r) => `${r.actor}: ${fallbackReason(r)}`).join(', ');
    return new ProviderFailure(
      err.kind,
      `${err.message} (no fallback answered: ${why})`,
      `${err.hint}; or list other fallbacks (fallbacks of ${this.primary.name})`,
      err.status,
    );
  }
}
