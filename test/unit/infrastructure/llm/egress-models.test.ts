/**
 * LLM requests through the egress guard (server mode): an endpoint on loopback is refused at
 * connect time — not retried, the reason in the failure — unless the request says the actor's
 * namespace may reach private networks, or the administrator allowlisted the host.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AiSdkLanguageModels, EgressGuard } from '../../../../src/infrastructure/index.ts';
import { ProviderFailure, type ModelEvent, type ModelRequest } from '../../../../src/application/index.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';
import { startFakeAnthropic, startFakeOpenAI, type FakeLlm } from '../../../support/fake-llm.ts';

const PROVIDERS = [
  { provider: 'openai-compatible', start: startFakeOpenAI },
  { provider: 'anthropic', start: startFakeAnthropic },
] as const;

async function run(models: AiSdkLanguageModels, req: ModelRequest): Promise<ModelEvent[] | ProviderFailure> {
  const events: ModelEvent[] = [];
  try {
    for await (const e of models.stream(req)) events.push(e);
    return events;
  } catch (err) {
    if (err instanceof ProviderFailure) return err;
    throw err;
  }
}

for (const { provider, start } of PROVIDERS) {
  describe(`${provider} through the egress guard`, () => {
    let fake: FakeLlm;
    let port: string;
    const guard = new EgressGuard();
    const models = new AiSdkLanguageModels({ guard, retryBaseMs: 10 });

    before(async () => {
      fake = await start({ models: ['fake-model'] });
      port = new URL(fake.url).port;
    });
    after(async () => {
      await fake.close();
      await guard.close();
    });

    const actor = (): ActorDefinition => ({
      name: 'team/gpt',
      provider,
      model: 'fake-model',
      baseUrl: fake.url,
      timeoutSeconds: 5,
      maxRetries: 2,
    });
    const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
      actor: actor(),
      messages: [{ role: 'user', text: 'hi' }],
      tools: [],
      signal: AbortSignal.timeout(20_000),
      ...over,
    });

    it('refuses a loopback endpoint at connect time, once, with the reason and who can allow it', async () => {
      const before = fake.requests.length;
      const r = await run(models, request());
      assert.ok(r instanceof ProviderFailure, 'the step failed');
      assert.equal(r.kind, 'network');
      assert.equal(
        r.message,
        `cannot reach ${fake.url}: egress to 127.0.0.1 is refused: it is a loopback address; a server administrator may allow it with \`agents serve --allow-egress 127.0.0.1:${port}\``,
      );
      assert.match(r.hint, /grant the actor's namespace private-network/);
      assert.equal(fake.requests.length, before, 'nothing reached the endpoint (and nothing was retried)');
    });

    it('does not retry a refused connection (the answer would be the same)', async () => {
      let lookups = 0;
      const counting = new EgressGuard({
        lookup: async () => {
          lookups++;
          return ['127.0.0.1'];
        },
      });
      const r = await run(
        new AiSdkLanguageModels({ guard: counting, retryBaseMs: 1 }),
        request({ actor: { ...actor(), baseUrl: `http://llm.internal.test:${port}/v1` } }),
      );
      assert.ok(r instanceof ProviderFailure);
      assert.match(
        r.message,
        /egress to llm\.internal\.test is refused: it resolves to 127\.0\.0\.1, a loopback address/,
      );
      assert.equal(lookups, 1, 'one attempt, though maxRetries is 2');
      await counting.close();
    });

    it('reaches it when the actor may use private networks', async () => {
      fake.push({ text: ['hel', 'lo'] });
      const r = await run(models, request({ privateNetwork: true }));
      assert.ok(Array.isArray(r), r instanceof Error ? r.message : 'no events');
      assert.deepEqual(
        r.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.delta : '')),
        ['hel', 'lo'],
      );
      // The guarded model is cached apart from the unguarded one: the next guarded step is refused again.
      assert.ok((await run(models, request())) instanceof ProviderFailure);
    });

    it('reaches it when the administrator allowlisted the host and port', async () => {
      const allowed = new EgressGuard({ allow: [`127.0.0.1:${port}`] });
      fake.push({ text: ['ok'] });
      const r = await run(new AiSdkLanguageModels({ guard: allowed }), request());
      assert.ok(Array.isArray(r), r instanceof Error ? r.message : 'no events');
      await allowed.close();
    });

    it('the endpoint check says the same, and passes with privateNetwork', async () => {
      const refused = await models.check(actor(), undefined, AbortSignal.timeout(5000));
      assert.equal(refused.ok, false);
      assert.match(refused.detail, /egress to 127\.0\.0\.1 is refused: it is a loopback address/);
      assert.match(refused.hint ?? '', /private-network/);
      const ok = await models.check(actor(), undefined, AbortSignal.timeout(5000), { privateNetwork: true });
      assert.equal(ok.ok, true, ok.detail);
    });
  });
}
