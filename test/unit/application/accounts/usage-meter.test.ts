import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageMeter } from '../../../../src/application/accounts/usage-meter.ts';
import type { UsageLedger } from '../../../../src/application/index.ts';
import type {
  LanguageModels,
  ModelEvent,
  ModelRequest,
} from '../../../../src/application/ports/language-model.port.ts';
import type { Logger } from '../../../../src/application/ports/logger.port.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';

class FakeLedger implements UsageLedger {
  rows: Array<{ user: string; tokens: number; at: string }> = [];
  prunedBefore: string[] = [];
  fail = false;
  record(user: string, tokens: number, at: string): Promise<void> {
    if (this.fail) return Promise.reject(new Error('database down'));
    this.rows.push({ user, tokens, at });
    return Promise.resolve();
  }
  prune(before: string): Promise<number> {
    this.prunedBefore.push(before);
    return Promise.resolve(0);
  }
}

/** A model whose every step streams a word, then finishes with 30 + 12 tokens. */
const models: LanguageModels = {
  async *stream(): AsyncIterable<ModelEvent> {
    yield { type: 'text', delta: 'hi' };
    yield { type: 'finish', reason: 'stop', usage: { inputTokens: 30, outputTokens: 12 } };
  },
  check: () => Promise.resolve({ ok: true }) as ReturnType<LanguageModels['check']>,
};

const request = (spender?: string): ModelRequest => ({
  actor: { name: 'local/gpt' } as unknown as ActorDefinition,
  messages: [],
  tools: [],
  signal: new AbortController().signal,
  ...(spender ? { spender } : {}),
});

function meter(clock = { t: Date.UTC(2026, 11, 7, 12, 0, 0) }) {
  const ledger = new FakeLedger();
  const warned: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    error() {},
    warn: (_: unknown, msg: string) => void warned.push(msg),
  };
  const metered = new UsageMeter({ ledger, logger, now: () => clock.t }).models(models);
  const run = async (spender?: string): Promise<ModelEvent[]> => {
    const out: ModelEvent[] = [];
    for await (const ev of metered.stream(request(spender))) out.push(ev);
    return out;
  };
  return { ledger, warned, run, clock };
}

describe('UsageMeter', () => {
  it("records each step's input and output tokens for its spender before the step's finish is passed on", async () => {
    const { ledger, run } = meter();
    const events = await run('alice');
    assert.deepEqual(
      events.map((e) => e.type),
      ['text', 'finish'],
    );
    assert.deepEqual(ledger.rows, [{ user: 'alice', tokens: 42, at: '2026-12-07T12:00:00.000Z' }]);
  });

  it('records nothing for a step without a spender', async () => {
    const { ledger, run } = meter();
    await run();
    assert.deepEqual(ledger.rows, []);
  });

  it('a failed write is logged and the step goes on', async () => {
    const { ledger, warned, run } = meter();
    ledger.fail = true;
    const events = await run('alice');
    assert.equal(events.at(-1)?.type, 'finish');
    assert.deepEqual(warned, ["recording a model step's tokens failed; they do not count"]);
  });

  it('forgets rows older than two days, at most once an hour', async () => {
    const { ledger, run, clock } = meter();
    await run('alice');
    await run('alice');
    assert.deepEqual(ledger.prunedBefore, ['2026-12-05T12:00:00.000Z']);
    clock.t += 3_600_000;
    await run('alice');
    assert.deepEqual(ledger.prunedBefore, ['2026-12-05T12:00:00.000Z', '2026-12-05T13:00:00.000Z']);
  });
});
