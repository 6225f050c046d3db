/**
 * A plan phase's model steps fall back like a chat's: PlanModel with the real provider adapter
 * against two fake OpenAI-compatible servers — the fallback gets the step, the phase is told who
 * answers and why, the plan's tokens and cost are the fallback's; when every model fails the
 * phase stops with a PlanActorFailure that says so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PlanActorFailure, PlanModel, type PlanLlmDeps } from '../../../../src/application/plans/llm/plan-model.ts';
import { PlanBudget } from '../../../../src/application/plans/llm/plan-budget.ts';
import { streamStep } from '../../../../src/application/agent/agent-step.ts';
import type { ApiKeys } from '../../../../src/application/index.ts';
import type { FallbackRecord } from '../../../../src/domain/registry/fallbacks.ts';
import type { Plan } from '../../../../src/domain/plan/plan.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';
import { AiSdkLanguageModels } from '../../../../src/infrastructure/index.ts';
import { startFakeOpenAI, type FakeLlm } from '../../../support/fake-llm.ts';

const KEY = 'sk-plan-fallback';
const keys: ApiKeys = { resolve: () => Promise.resolve({ present: true, key: KEY, source: 'test' }) };

describe('a plan phase falls back', () => {
  let one: FakeLlm;
  let two: FakeLlm;
  let defs: Record<string, ActorDefinition>;
  let deps: PlanLlmDeps;

  before(async () => {
    one = await startFakeOpenAI({ expectKey: KEY });
    two = await startFakeOpenAI({ expectKey: KEY });
    const def = (name: string, fake: FakeLlm, extra: Partial<ActorDefinition> = {}): ActorDefinition => ({
      name,
      provider: 'openai-compatible',
      model: `${name.slice(6)}-model`,
      baseUrl: fake.url,
      apiKeyEnv: 'PLAN_KEY',
      maxRetries: 0,
      ...extra,
    });
    defs = {
      'local/one': def('local/one', one, { fallbacks: ['local/two'] }),
      'local/two': def('local/two', two, { prices: { inputPerMillion: 1000, outputPerMillion: 1000 } }),
    };
    // Only the models and the keys take part in a step.
    deps = { models: new AiSdkLanguageModels({ retryBaseMs: 1 }), keys } as unknown as PlanLlmDeps;
  });

  after(async () => {
    await Promise.all([one?.close(), two?.close()]);
  });

  const plan = (): Plan =>
    ({
      usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
      budget: { maxToolCalls: 100, maxWallMs: 3_600_000 },
    }) as unknown as Plan;
  const lookup = (n: string): Promise<ActorDefinition | undefined> => Promise.resolve(defs[n]);
  const step = { system: 'You plan.', messages: [{ role: 'user' as const, text: 'plan it' }], tools: [] };
  /** One step as the agent loop takes it: the plan's usage and cost counted by its budget. */
  const stepOf = (model: PlanModel, p: Plan): Promise<{ text: string }> =>
    streamStep({
      model: model.agentModel(),
      request: step,
      promptTokens: 0,
      budget: new PlanBudget(
        p,
        () => undefined,
        (u) => model.cost(u),
      ),
      signal: new AbortController().signal,
      onText: () => Promise.resolve(),
    });

  it('a 429 of the plan actor goes to its fallback, reported to the phase, counted at its prices', async () => {
    const told: Array<{ records: FallbackRecord[]; text: string }> = [];
    const model = await PlanModel.open('local/one', lookup, deps, {
      report: (records, text) => {
        told.push({ records: structuredClone(records), text });
        return Promise.resolve();
      },
    });
    one.push({ error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' } });
    two.push({ text: ['the plan'], usage: { input: 10, output: 5 } });
    const p = plan();
    const r = await stepOf(model, p);
    assert.equal(r.text, 'the plan');
    const sent = two.generations.at(-1)?.body as { model: string; messages: Array<{ role: string; content: unknown }> };
    assert.equal(sent.model, 'two-model');
    assert.deepEqual(
      sent.messages.map((m) => m.role),
      ['system', 'user'],
    );
    assert.equal(told.length, 1);
    assert.equal(told[0]?.text, 'local/one failed (rate limited (429)): local/two answers instead');
    assert.deepEqual(
      told[0]?.records.map((x) => [x.actor, x.kind, x.status, x.next]),
      [['local/one', 'rate-limit', 429, 'local/two']],
    );
    assert.equal(p.usage.tokens, 15);
    assert.equal(p.usage.costUsd, 0.015);
    // The next step stays with the fallback.
    two.push({ text: ['again'] });
    const before = one.generations.length;
    assert.equal((await stepOf(model, p)).text, 'again');
    assert.equal(one.generations.length, before);
  });

  it('a phase resumed on its task (after an approval) goes on with the fallback that answered it', async () => {
    const earlier: FallbackRecord[] = [
      {
        actor: 'local/one',
        model: 'one-model',
        kind: 'rate-limit',
        status: 429,
        message: 'slow down',
        next: 'local/two',
      },
    ];
    const model = await PlanModel.open('local/one', lookup, deps, { report: () => Promise.resolve(), earlier });
    two.push({ text: ['resumed'] });
    const before = one.generations.length;
    assert.equal((await stepOf(model, plan())).text, 'resumed');
    assert.equal(one.generations.length, before, 'the first model was not asked');
  });

  it('when every model fails, the phase stops saying which failed and why', async () => {
    const model = await PlanModel.open('local/one', lookup, deps);
    one.push({ error: { status: 503, type: 'server_error', message: 'down' } });
    two.push({ error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' } });
    await assert.rejects(stepOf(model, plan()), (err: unknown) => {
      assert.ok(err instanceof PlanActorFailure);
      assert.match(
        err.error.message,
        /^local\/one failed: .*no fallback answered: local\/one: server error \(503\), local\/two: rate limited \(429\)/,
      );
      return true;
    });
  });
});
