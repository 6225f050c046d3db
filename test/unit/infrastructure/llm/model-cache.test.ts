import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AiSdkLanguageModels } from '../../../../src/infrastructure/index.ts';
import type { ModelEvent, ModelRequest } from '../../../../src/application/index.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';
import { startFakeOpenAI, type FakeLlm } from '../../../support/fake-llm.ts';

function request(fake: FakeLlm, apiKey: string | undefined, actor: Partial<ActorDefinition> = {}): ModelRequest {
  return {
    actor: {
      name: 'local/x',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      timeoutSeconds: 5,
      maxRetries: 0,
      ...actor,
    },
    apiKey,
    messages: [{ role: 'user', text: 'hi' }],
    tools: [],
    signal: AbortSignal.timeout(20_000),
  };
}

async function run(models: AiSdkLanguageModels, req: ModelRequest): Promise<ModelEvent[] | Error> {
  const events: ModelEvent[] = [];
  try {
    for await (const e of models.stream(req)) events.push(e);
    return events;
  } catch (err) {
    return err as Error;
  }
}

const cached = (m: AiSdkLanguageModels): number => (m as unknown as { models: Map<string, unknown> }).models.size;

describe('AiSdkLanguageModels keeps provider models for reuse', () => {
  it('one provider model serves every step of the same actor and key', async (t) => {
    const fake = await startFakeOpenAI();
    t.after(() => fake.close());
    fake.reply(() => ({ text: ['ok'] }));
    const models = new AiSdkLanguageModels();
    for (let i = 0; i < 3; i++) assert.ok(Array.isArray(await run(models, request(fake, undefined))));
    assert.equal(cached(models), 1);
  });

  it('another key replaces the model: the endpoint sees the key of each step', async (t) => {
    const fake = await startFakeOpenAI({ expectKey: 'sk-right' });
    t.after(() => fake.close());
    fake.reply(() => ({ text: ['ok'] }));
    const models = new AiSdkLanguageModels();
    const wrong = await run(models, request(fake, 'sk-wrong'));
    assert.ok(wrong instanceof Error, 'the wrong key is refused');
    const right = await run(models, request(fake, 'sk-right'));
    assert.ok(Array.isArray(right), `the right key is used: ${right instanceof Error ? right.message : ''}`);
    const auth = fake.generations.map((r) => r.headers.authorization);
    assert.deepEqual(auth, ['Bearer sk-wrong', 'Bearer sk-right']);
    assert.equal(cached(models), 1);
    assert.ok(Array.isArray(await run(models, request(fake, 'sk-right'))));
    assert.ok((await run(models, request(fake, undefined))) instanceof Error, 'no key is not the cached key');
    assert.equal(fake.generations.at(-1)?.headers.authorization, undefined);
  });

  it('another baseUrl or model makes another model', async (t) => {
    const a = await startFakeOpenAI();
    const b = await startFakeOpenAI({ models: ['other-model'] });
    t.after(() => Promise.all([a.close(), b.close()]));
    a.reply(() => ({ text: ['a'] }));
    b.reply(() => ({ text: ['b'] }));
    const models = new AiSdkLanguageModels();
    await run(models, request(a, undefined));
    await run(models, { ...request(a, undefined), actor: { ...request(a, undefined).actor, baseUrl: b.url } });
    await run(models, { ...request(b, undefined), actor: { ...request(b, undefined).actor, model: 'other-model' } });
    assert.equal(a.generations.length, 1);
    assert.equal(b.generations.length, 2);
    assert.deepEqual(
      b.generations.map((r) => (r.body as { model?: unknown }).model),
      ['fake-model', 'other-model'],
    );
    assert.equal(cached(models), 3);
  });
});

describe('AiSdkLanguageModels after a step read to its end', () => {
  it('leaves the finished request alone (no abort per step), and still aborts one left early', async (t) => {
    const fake = await startFakeOpenAI();
    t.after(() => fake.close());
    fake.reply(() => ({ text: ['one', 'two'] }));
    const signals: AbortSignal[] = [];
    const spy: typeof fetch = (input, init) => {
      if (init?.signal) signals.push(init.signal);
      return fetch(input, init);
    };
    const models = new AiSdkLanguageModels({ fetch: spy });
    assert.ok(Array.isArray(await run(models, request(fake, undefined))));
    assert.equal(signals.length, 1);
    assert.equal(signals[0]?.aborted, false, 'a finished request is not aborted');

    const it = models.stream(request(fake, undefined))[Symbol.asyncIterator]();
    await it.next();
    await it.return?.(undefined);
    assert.equal(signals.length, 2);
    assert.equal(signals[1]?.aborted, true, 'a request left before its end is aborted');
  });
});
