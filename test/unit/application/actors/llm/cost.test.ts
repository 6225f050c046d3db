/**
 * The cost of a model's tokens at an actor's prices: uncached input at the input price, prompt
 * cache reads and writes at the cache prices (given, or the provider's multiples of the input
 * price), and — across fallbacks — each model's tokens at its own prices.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelCandidates } from '../../../../../src/application/actors/llm/model-candidates.service.ts';
import { costOf } from '../../../../../src/application/actors/llm/tool-args.ts';
import {
  ProviderFailure,
  type LanguageModels,
  type ModelEvent,
  type ModelRequest,
  type ModelUsage,
} from '../../../../../src/application/index.ts';
import type { ActorDefinition } from '../../../../../src/domain/registry/actor.definition.ts';

/** $3 / $15 per million, as Claude Sonnet. */
const SONNET = { inputPerMillion: 3, outputPerMillion: 15 };
const amount = (c: { amount: number } | undefined): number | undefined => c?.amount;

describe('costOf', () => {
  it('is undefined without prices', () => {
    assert.equal(costOf(undefined, { inputTokens: 1000, outputTokens: 10 }, 'anthropic'), undefined);
  });

  it('charges input and output at their prices when nothing was cached', () => {
    assert.deepEqual(costOf(SONNET, { inputTokens: 1_000_000, outputTokens: 100_000 }, 'anthropic'), {
      amount: 4.5,
      currency: 'USD',
    });
  });

  it('Anthropic without cache prices: reads at 0.1× and writes at 1.25× the input price, the rest at the input price', () => {
    // 1M input of which 600k read and 200k written: 200k × 3 + 600k × 0.3 + 200k × 3.75 = 0.6 + 0.18 + 0.75
    const usage = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 600_000, cacheWriteTokens: 200_000 };
    assert.equal(amount(costOf(SONNET, usage, 'anthropic')), 1.53);
  });

  it('OpenAI without a cache price: cached input at 0.5× the input price', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 400_000 };
    // 600k × 2 + 400k × 1
    assert.equal(amount(costOf({ inputPerMillion: 2, outputPerMillion: 8 }, usage, 'openai')), 1.6);
  });

  it('an openai-compatible endpoint (or no provider named) charges cached input at the input price', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 400_000 };
    assert.equal(amount(costOf({ inputPerMillion: 2, outputPerMillion: 8 }, usage, 'openai-compatible')), 2);
    assert.equal(amount(costOf({ inputPerMillion: 2, outputPerMillion: 8 }, usage)), 2);
  });

  it('the actor’s own cache prices win over the provider’s multiples', () => {
    const prices = { ...SONNET, cacheReadPerMillion: 0.5, cacheWritePerMillion: 5, currency: 'EUR' };
    const usage = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 600_000, cacheWriteTokens: 200_000 };
    // 200k × 3 + 600k × 0.5 + 200k × 5
    assert.deepEqual(costOf(prices, usage, 'anthropic'), { amount: 1.9, currency: 'EUR' });
  });

  it('never counts negative uncached input when the cache figures exceed the total', () => {
    const usage = { inputTokens: 100, outputTokens: 0, cacheReadTokens: 1_000_000 };
    assert.equal(amount(costOf(SONNET, usage, 'anthropic')), 0.3);
  });
});

describe('ModelCandidates.cost with prompt-cache usage', () => {
  const def = (name: string, extra: Partial<ActorDefinition> = {}): ActorDefinition => ({
    name,
    provider: 'anthropic',
    model: 'm',
    prices: SONNET,
    ...extra,
  });

  /** Answers each step with the next scripted usage; a 'fail' fails with a rate limit (a fallback's cue). */
  function models(script: Array<ModelUsage | 'fail'>): LanguageModels {
    return {
      async *stream(_req: ModelRequest): AsyncGenerator<ModelEvent> {
        const next = script.shift();
        if (next === undefined || next === 'fail') throw new ProviderFailure('rate-limit', 'slow down', 'wait', 429);
        yield { type: 'finish', reason: 'stop', usage: next };
      },
      check: () => Promise.resolve({ ok: true, detail: '' }),
    };
  }

  const drain = async (c: ModelCandidates): Promise<void> => {
    for await (const ev of c.stream({ messages: [], tools: [], signal: new AbortController().signal })) void ev;
  };

  it('charges the cache reads and writes of the turn at the primary’s cache prices', async () => {
    const primary = def('local/a');
    const c = new ModelCandidates(
      { name: 'local/a', def: primary, apiKey: undefined },
      {
        models: models([
          { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 600_000, cacheWriteTokens: 200_000 },
        ]),
        keys: { resolve: () => Promise.resolve({ present: true, key: 'k', source: 't' }) },
        lookup: () => Promise.resolve(undefined),
      },
    );
    await drain(c);
    const total = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 600_000, cacheWriteTokens: 200_000 };
    assert.equal(amount(c.cost(total)), 1.53);
  });

  it('counts a fallback’s cache reads at its own prices, and only the rest at the primary’s', async () => {
    const primary = def('local/a', { fallbacks: ['local/b'] });
    const fallback = def('local/b', { prices: { inputPerMillion: 10, outputPerMillion: 10, cacheReadPerMillion: 1 } });
    const c = new ModelCandidates(
      { name: 'local/a', def: primary, apiKey: undefined },
      {
        models: models(['fail', { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 500_000 }]),
        keys: { resolve: () => Promise.resolve({ present: true, key: 'k', source: 't' }) },
        lookup: (n) => Promise.resolve(n === 'local/b' ? fallback : undefined),
      },
    );
    await drain(c);
    // The turn's total is only the fallback's step: 500k × 10 + 500k × 1 at b's prices, nothing at a's.
    assert.equal(amount(c.cost({ inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 500_000 })), 5.5);
  });
});
