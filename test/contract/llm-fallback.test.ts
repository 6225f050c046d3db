/**
 * Fallbacks of an LLM actor, through the real agent (in-memory transport) and the real provider
 * adapter against the fake OpenAI-compatible and Anthropic servers: which failures fall back, what
 * the next model is sent, what the task records, and what never falls back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  actorRegistry,
  projectRegistry,
  resourceRegistry,
  sessionCreate,
  type A2AClient,
  type Task,
} from '../../src/protocol/client/index.ts';
import { startFakeAnthropic, startFakeOpenAI, type FakeLlm, type FakeReply } from '../support/fake-llm.ts';
import { startHarness, tempDir, type Harness } from '../support/harness.ts';
import { freePort } from '../support/ports.ts';
import { addActor, LLM_TEST_KEY, statusText, streamTurn, type Turn } from './llm.suite.ts';
import { rpcError } from './a2a.suite.ts';
import { makeRepo } from './registry.suite.ts';

process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;
process.env['LLM_WRONG_KEY'] = 'sk-not-the-right-one';
process.env['CLEVERAGENTS_LLM_RETRY_BASE_MS'] = '20';

type Body = { messages: Array<{ role: string; content?: unknown }>; model?: string };
const rateLimited: FakeReply = { error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' } };
const meta = (t: Task): Record<string, unknown> => t.metadata ?? {};
const fallbacks = (t: Task): Array<Record<string, unknown>> => (meta(t)['fallbacks'] ?? []) as never;
const usage = (t: Task): Record<string, unknown> => meta(t)['usage'] as Record<string, unknown>;

describe('an LLM actor falls back to its fallbacks', () => {
  let h: Harness;
  let client: A2AClient;
  let first: FakeLlm;
  let second: FakeLlm;
  let claude: FakeLlm;
  let work: string;
  let repo: string;
  let n = 0;

  /** An actor on `fake` (model `model`), registered; returns its name. */
  async function actor(fake: FakeLlm, model: string, extra: Record<string, unknown> = {}): Promise<string> {
    const name = `local/f${++n}`;
    await addActor(client, {
      name,
      provider: fake === claude ? 'anthropic' : 'openai-compatible',
      model,
      baseUrl: fake.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      maxRetries: 0,
      ...extra,
    });
    return name;
  }

  async function turn(name: string, text: string, project?: string): Promise<Turn> {
    const s = await client.call(sessionCreate, { actor: name, ...(project ? { project } : {}) });
    return streamTurn(client, text, { contextId: s.id });
  }

  before(async () => {
    h = await startHarness('memory');
    client = h.client;
    first = await startFakeOpenAI({ expectKey: LLM_TEST_KEY, models: ['model-one'] });
    second = await startFakeOpenAI({ expectKey: LLM_TEST_KEY, models: ['model-two'] });
    claude = await startFakeAnthropic({ expectKey: LLM_TEST_KEY, models: ['claude-fake'] });
    work = tempDir('ca-llm-fallback-');
    repo = makeRepo(join(work, 'repo'));
    await client.call(resourceRegistry.add, { definition: { name: 'local/fb', type: 'git-checkout', path: repo } });
    await client.call(projectRegistry.add, { definition: { name: 'local/fb', resources: ['local/fb'] } });
  });

  after(async () => {
    await h?.close();
    await Promise.all([first?.close(), second?.close(), claude?.close()]);
    rmSync(work, { recursive: true, force: true });
  });

  it('a 429 from the first model goes to the second: it gets the same request, the task says who answered and why', async () => {
    const b = await actor(second, 'model-two', { prices: { inputPerMillion: 1000, outputPerMillion: 1000 } });
    const a = await actor(first, 'model-one', { fallbacks: [b] });
    first.push(rateLimited);
    second.push({ text: ['from ', 'two'], usage: { input: 7, output: 2 } });
    const sentToSecond = second.generations.length;
    const t = await turn(a, 'which model are you?');
    assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
    assert.equal(t.chunks.join(''), 'from two');
    const req = second.generations[sentToSecond]?.body as Body;
    assert.equal(req.model, 'model-two');
    assert.match(JSON.stringify(req.messages.at(-1)), /which model are you\?/);
    assert.deepEqual(fallbacks(t.task), [
      {
        actor: a,
        model: 'model-one',
        kind: 'rate-limit',
        status: 429,
        message: fallbacks(t.task)[0]?.['message'],
        next: b,
      },
    ]);
    assert.match(String(fallbacks(t.task)[0]?.['message']), /rate-limiting requests \(429\): slow down/);
    const u = usage(t.task);
    assert.equal(u['actor'], b);
    assert.equal(u['model'], 'model-two');
    assert.equal(u['provider'], 'openai-compatible');
    // The tokens are the fallback's, at the fallback's prices (the first actor has none).
    assert.deepEqual(u['cost'], { amount: 0.009, currency: 'USD' });
    const said = (t.task.history ?? []).map((m) => m.parts.map((p) => p.text ?? '').join(''));
    assert.ok(
      said.some((s) => s === `${a} failed (rate limited (429)): ${b} answers instead`),
      said.join(' | '),
    );
  });

  it('a 5xx, a timeout, a missing model and an unreachable endpoint fall back too', async () => {
    const b = await actor(second, 'model-two');
    const closed = await freePort();
    const cases: Array<{ kind: string; reply?: FakeReply; extra?: Record<string, unknown> }> = [
      { kind: 'server', reply: { error: { status: 503, type: 'server_error', message: 'overloaded' } } },
      { kind: 'timeout', reply: { hang: true }, extra: { timeoutSeconds: 0.3 } },
      { kind: 'model-not-found', reply: { error: { status: 404, code: 'model_not_found', message: 'no such model' } } },
      { kind: 'network', extra: { baseUrl: `http://127.0.0.1:${closed}/v1` } },
    ];
    for (const c of cases) {
      const a = await actor(first, 'model-one', { fallbacks: [b], ...c.extra });
      if (c.reply) first.push(c.reply);
      second.push({ text: [`rescued ${c.kind}`] });
      const t = await turn(a, 'hi');
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', `${c.kind}: ${statusText(t.task)}`);
      assert.equal(t.chunks.join(''), `rescued ${c.kind}`);
      assert.equal(fallbacks(t.task)[0]?.['kind'], c.kind);
      assert.equal(fallbacks(t.task)[0]?.['next'], b);
      assert.equal(usage(t.task)['actor'], b);
    }
  });

  it('once a turn fell back, its later steps go to the fallback', async () => {
    const b = await actor(second, 'model-two');
    const a = await actor(first, 'model-one', { fallbacks: [b] });
    first.push(rateLimited);
    second.push({ toolCalls: [{ name: 'no_such_tool', arguments: '{}' }] }, { text: ['done'] });
    const toFirst = first.generations.length;
    const toSecond = second.generations.length;
    const t = await turn(a, 'call something');
    assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
    assert.equal(first.generations.length - toFirst, 1, 'the first model was asked once');
    assert.equal(second.generations.length - toSecond, 2, 'both steps went to the fallback');
    assert.equal(usage(t.task)['steps'], 2);
  });

  it('a turn that falls back mid-way costs each model its own prices', async () => {
    const b = await actor(second, 'model-two', { prices: { inputPerMillion: 2000, outputPerMillion: 0 } });
    const a = await actor(first, 'model-one', {
      fallbacks: [b],
      prices: { inputPerMillion: 1000, outputPerMillion: 0 },
    });
    first.push(
      { toolCalls: [{ name: 'no_such_tool', arguments: '{}' }], usage: { input: 10, output: 0 } },
      rateLimited,
    );
    second.push({ text: ['done'], usage: { input: 10, output: 0 } });
    const t = await turn(a, 'go');
    assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
    assert.equal(usage(t.task)['actor'], b);
    assert.equal(usage(t.task)['inputTokens'], 20);
    // 10 tokens at 1000/M (the actor's step) + 10 at 2000/M (the fallback's).
    assert.deepEqual(usage(t.task)['cost'], { amount: 0.03, currency: 'USD' });
  });

  it('a turn that fell back and waited for an approval goes on with the fallback, its records kept', async () => {
    const b = await actor(second, 'model-two');
    const a = await actor(first, 'model-one', { fallbacks: [b], tools: ['builtin/write-file'] });
    first.push(rateLimited);
    second.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"fb.txt","content":"two\\n"}' }] });
    const t = await turn(a, 'write fb.txt', 'local/fb');
    assert.equal(t.task.status.state, 'TASK_STATE_INPUT_REQUIRED', statusText(t.task));
    assert.equal(existsSync(join(repo, 'fb.txt')), false);
    second.push({ text: ['written by two'] });
    const toFirst = first.generations.length;
    const answered = await streamTurn(client, 'yes', { contextId: t.task.contextId, taskId: t.task.id });
    assert.equal(answered.task.status.state, 'TASK_STATE_COMPLETED', statusText(answered.task));
    assert.equal(readFileSync(join(repo, 'fb.txt'), 'utf8'), 'two\n');
    assert.equal(first.generations.length, toFirst, 'the first model was not asked again');
    assert.equal(usage(answered.task)['actor'], b);
    assert.deepEqual(
      fallbacks(answered.task).map((r) => [r['actor'], r['next']]),
      [[a, b]],
    );
  });

  it('no fallback once the answer has started streaming', async () => {
    const b = await actor(second, 'model-two');
    const a = await actor(first, 'model-one', { fallbacks: [b] });
    first.push({ text: ['half an ', 'answer'], errorAfter: 1, streamError: { type: 'server_error', message: 'boom' } });
    const toSecond = second.generations.length;
    const t = await turn(a, 'hi');
    assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
    assert.equal(t.chunks.join(''), 'half an ');
    assert.equal(second.generations.length, toSecond, 'the fallback was not asked');
    assert.equal(meta(t.task)['fallbacks'], undefined);
  });

  it('an authentication failure does not fall back', async () => {
    const b = await actor(second, 'model-two');
    const a = await actor(first, 'model-one', { fallbacks: [b], apiKeyEnv: 'LLM_WRONG_KEY' });
    const toSecond = second.generations.length;
    const t = await turn(a, 'hi');
    assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
    assert.match(statusText(t.task), /refused the API key \(401\)/);
    assert.equal(second.generations.length, toSecond, 'the fallback was not asked');
  });

  it('falls back across providers: OpenAI-compatible to Anthropic', async () => {
    const c = await actor(claude, 'claude-fake', { systemPrompt: 'Be brief.' });
    const a = await actor(first, 'model-one', { fallbacks: [c], systemPrompt: 'Be brief.' });
    first.push(rateLimited);
    claude.push({ text: ['claude ', 'here'], usage: { input: 5, output: 2 } });
    const sent = claude.generations.length;
    const t = await turn(a, 'who answers?');
    assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
    assert.equal(t.chunks.join(''), 'claude here');
    const req = claude.generations[sent]?.body as Body & { system?: unknown };
    assert.equal(req.model, 'claude-fake');
    assert.match(JSON.stringify(req.system), /Be brief\./);
    assert.match(JSON.stringify(req.messages), /who answers\?/);
    assert.equal(usage(t.task)['provider'], 'anthropic');
    assert.equal(usage(t.task)['model'], 'claude-fake');
  });

  it('a built-in, missing or keyless fallback is skipped and recorded; when every one fails the turn says so', async () => {
    const gone = await actor(second, 'model-two');
    const keyless = await actor(second, 'model-two', { apiKeyEnv: 'LLM_KEY_NOT_SET' });
    const b = await actor(second, 'model-two');
    const a = await actor(first, 'model-one', { fallbacks: ['builtin/echo', gone, keyless, b] });
    await client.call(actorRegistry.remove, { name: gone, force: true });
    first.push(rateLimited);
    second.push(rateLimited);
    const t = await turn(a, 'hi');
    assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
    assert.deepEqual(
      fallbacks(t.task).map((r) => [r['actor'], r['kind'], r['next']]),
      [
        [a, 'rate-limit', b],
        ['builtin/echo', 'skipped', b],
        [gone, 'skipped', b],
        [keyless, 'skipped', b],
        [b, 'rate-limit', null],
      ],
    );
    assert.match(String(fallbacks(t.task)[1]?.['message']), /built-in actor/);
    assert.match(String(fallbacks(t.task)[2]?.['message']), /there is no actor/);
    assert.match(String(fallbacks(t.task)[3]?.['message']), /no API key for local\/f\d+: LLM_KEY_NOT_SET is not set/);
    assert.match(statusText(t.task), /no fallback answered: local\/f\d+: rate limited \(429\), builtin\/echo: skipped/);
  });

  it('an actor used as a fallback cannot be removed; fallbacks must exist, at most five, none twice', async () => {
    const b = await actor(second, 'model-two');
    const a = await actor(first, 'model-one', { fallbacks: [b] });
    const inUse = await rpcError(client.call(actorRegistry.remove, { name: b }), -32004, 'EntityInUseError');
    assert.match(inUse.message, new RegExp(`actor ${a}`));
    const base = { provider: 'openai-compatible', model: 'm', baseUrl: first.url };
    await rpcError(
      client.call(actorRegistry.add, { definition: { name: 'local/bad1', ...base, fallbacks: ['local/nope'] } }),
      -32602,
      'ValidationError',
    );
    const twice = await rpcError(
      client.call(actorRegistry.add, { definition: { name: 'local/bad2', ...base, fallbacks: [b, b] } }),
      -32602,
      'ValidationError',
    );
    assert.match(JSON.stringify(twice.data), /names an actor twice/);
    await rpcError(
      client.call(actorRegistry.add, {
        definition: { name: 'local/bad4', provider: 'builtin', model: 'echo', fallbacks: [b] },
      }),
      -32602,
      'ValidationError',
    );
    const six = await Promise.all(Array.from({ length: 6 }, () => actor(second, 'model-two')));
    const tooMany = await rpcError(
      client.call(actorRegistry.add, { definition: { name: 'local/bad3', ...base, fallbacks: six } }),
      -32602,
      'ValidationError',
    );
    assert.match(JSON.stringify(tooMany.data), /lists at most 5 actors/);
  });
});
