import { describe, it } from 'node:test';
import { freePort } from '../../../support/ports.ts';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { AiSdkLanguageModels } from '../../../../src/infrastructure/index.ts';
import { retryAfter } from '../../../../src/infrastructure/llm/provider-failures.ts';
import {
  ProviderFailure,
  type ModelEvent,
  type ModelMessage,
  type ModelRequest,
  type ProviderFailureKind,
} from '../../../../src/application/index.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';
import { eventually } from '../../../support/eventually.ts';
import {
  createGate,
  startFakeAnthropic,
  startFakeOpenAI,
  type FakeLlm,
  type FakeLlmOptions,
} from '../../../support/fake-llm.ts';

const KEY = 'sk-test-SECRET-0123456789';
const PROVIDERS = [
  { provider: 'openai-compatible', start: startFakeOpenAI },
  { provider: 'anthropic', start: startFakeAnthropic },
] as const;

const models = new AiSdkLanguageModels({ retryBaseMs: 10 });

function request(
  fake: FakeLlm,
  provider: ActorDefinition['provider'],
  over: Partial<ModelRequest> = {},
  actor: Partial<ActorDefinition> = {},
): ModelRequest {
  return {
    actor: {
      name: 'local/x',
      provider,
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'TEST_KEY',
      timeoutSeconds: 5,
      ...actor,
    },
    apiKey: KEY,
    messages: [{ role: 'user', text: 'hi' }],
    tools: [],
    signal: AbortSignal.timeout(20_000),
    ...over,
  };
}

async function collect(req: ModelRequest, m = models): Promise<{ events: ModelEvent[]; error?: ProviderFailure }> {
  const events: ModelEvent[] = [];
  try {
    for await (const e of m.stream(req)) events.push(e);
    return { events };
  } catch (err) {
    assert.ok(err instanceof ProviderFailure, `not a ProviderFailure: ${String(err)}`);
    return { events, error: err };
  }
}

async function failure(req: ModelRequest, kind: ProviderFailureKind, m = models): Promise<ProviderFailure> {
  const { error } = await collect(req, m);
  assert.ok(error, 'the step should have failed');
  assert.equal(error.kind, kind, `${error.kind}: ${error.message}`);
  assert.ok(!error.message.includes(KEY) && !error.hint.includes(KEY), 'the key must not appear');
  return error;
}

/** A URL nothing listens on. */
const closedPortUrl = async (): Promise<string> => `http://127.0.0.1:${await freePort()}/v1`;

/** A step's usage as each fake reports it: Anthropic always sends its cache fields (0 when nothing was cached). */
const usageOf = (provider: ActorDefinition['provider'], inputTokens: number, outputTokens: number) =>
  provider === 'anthropic'
    ? { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 }
    : { inputTokens, outputTokens };

const texts = (events: ModelEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.delta] : []));

for (const { provider, start } of PROVIDERS) {
  describe(`AiSdkLanguageModels against the fake ${provider} server`, () => {
    const fake = async (t: { after: (fn: () => Promise<void>) => void }, options?: FakeLlmOptions) => {
      const f = await start(options);
      t.after(() => f.close());
      return f;
    };

    it('streams text deltas in order, the first before the server sends the rest', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      const gate = createGate();
      f.push({ text: ['Hel', 'lo', ' world'], gate: gate.promise, holdAfter: 1, usage: { input: 3, output: 3 } });
      const it = models.stream(request(f, provider))[Symbol.asyncIterator]();
      const first = await it.next();
      // the fake holds the rest until the gate opens: this delta was yielded as it arrived
      assert.deepEqual(first.value, { type: 'text', delta: 'Hel' });
      gate.release();
      const rest: ModelEvent[] = [];
      for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
      assert.deepEqual(texts(rest), ['lo', ' world']);
      assert.deepEqual(rest.at(-1), { type: 'finish', reason: 'stop', usage: usageOf(provider, 3, 3) });
      assert.equal(rest.filter((e) => e.type === 'finish').length, 1);
    });

    it('returns a tool call split over chunks whole and raw, and a malformed one raw', async (t) => {
      const f = await fake(t);
      const raw = '{ "path" : "src/a b.ts",\n "lines": [1, 2] }';
      f.push({
        text: ['Reading'],
        toolCalls: [
          { id: 'call_1', name: 'read_file', arguments: raw, chunks: 5 },
          { id: 'call_2', name: 'grep', arguments: '{"pattern": "x", ', chunks: 2 },
        ],
        usage: { input: 10, output: 20 },
      });
      const { events, error } = await collect(request(f, provider));
      assert.equal(error, undefined);
      const calls = events.flatMap((e) => (e.type === 'tool-call' ? [e.call] : []));
      assert.deepEqual(calls, [
        { id: 'call_1', name: 'read_file', arguments: raw },
        { id: 'call_2', name: 'grep', arguments: '{"pattern": "x", ' },
      ]);
      assert.deepEqual(events.at(-1), {
        type: 'finish',
        reason: 'tool-calls',
        usage: usageOf(provider, 10, 20),
      });
    });

    it('sends system, history with a tool round trip, tools, maxTokens, temperature and the key in the provider format', async (t) => {
      const f = await fake(t, { expectKey: KEY });
      f.push({ text: ['ok'] });
      const messages: ModelMessage[] = [
        { role: 'user', text: 'read a' },
        { role: 'assistant', text: 'sure', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }] },
        {
          role: 'tool',
          results: [{ id: 'c1', name: 'read_file', output: 'no such file', isError: true }],
        },
        { role: 'user', text: 'thanks' },
      ];
      const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
      const req = request(
        f,
        provider,
        {
          system: 'You are terse.',
          messages,
          tools: [{ name: 'read_file', description: 'Reads a file', inputSchema: schema }],
        },
        { maxTokens: 123, temperature: 0.2 },
      );
      const { error } = await collect(req);
      assert.equal(error, undefined);
      const [rec] = f.generations;
      assert.ok(rec);
      const body = rec.body as any;
      assert.equal(body.stream, true);
      assert.equal(body.max_tokens, 123);
      assert.equal(body.temperature, 0.2);
      assert.equal(body.model, 'fake-model');
      if (provider === 'anthropic') {
        assert.equal(rec.headers['x-api-key'], KEY);
        assert.equal(rec.headers['anthropic-version'], '2023-06-01');
        // The system prompt and the last tool carry cache breakpoints (prompt-cache.test.ts).
        assert.deepEqual(body.system, [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
        assert.deepEqual(body.tools[0].name, 'read_file');
        assert.deepEqual(body.tools[0].input_schema, schema);
        assert.deepEqual(body.messages[1], {
          role: 'assistant',
          content: [
            { type: 'text', text: 'sure' },
            { type: 'tool_use', id: 'c1', name: 'read_file', input: { path: 'a' } },
          ],
        });
        assert.equal(body.messages[2].role, 'user');
        assert.deepEqual(body.messages[2].content[0], {
          type: 'tool_result',
          tool_use_id: 'c1',
          content: 'no such file',
          is_error: true,
        });
        assert.deepEqual(body.messages[2].content[1], { type: 'text', text: 'thanks' });
      } else {
        assert.equal(rec.headers.authorization, `Bearer ${KEY}`);
        assert.deepEqual(body.stream_options, { include_usage: true });
        assert.deepEqual(body.messages[0], { role: 'system', content: 'You are terse.' });
        assert.deepEqual(body.tools, [
          { type: 'function', function: { name: 'read_file', description: 'Reads a file', parameters: schema } },
        ]);
        assert.deepEqual(body.messages[2], {
          role: 'assistant',
          content: 'sure',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
        });
        assert.deepEqual(body.messages[3], { role: 'tool', tool_call_id: 'c1', content: 'no such file' });
        assert.deepEqual(body.messages[4], { role: 'user', content: 'thanks' });
      }
    });

    it('reports 0 tokens when the endpoint sends no usage, and the default maxTokens', async (t) => {
      const f = await fake(t);
      f.push({ text: ['a'] });
      const { events } = await collect(request(f, provider));
      assert.deepEqual(events.at(-1), { type: 'finish', reason: 'stop', usage: usageOf(provider, 0, 0) });
      assert.equal((f.generations[0]?.body as any).max_tokens, 2048);
    });

    it('a wrong key is an auth failure naming where the key comes from, without the key', async (t) => {
      const f = await fake(t, { expectKey: 'the-right-key' });
      const e = await failure(request(f, provider), 'auth');
      assert.equal(e.status, 401);
      assert.match(e.message, /refused the API key \(401\)/);
      assert.match(e.hint, /\$TEST_KEY \(apiKeyEnv of local\/x\)/);
      assert.equal(f.generations.length, 1, 'auth failures are not retried');
    });

    it('never puts the key in a failure, even when the endpoint echoes it', async (t) => {
      const f = await fake(t);
      f.push({ error: { status: 400, type: 'invalid_request_error', message: `bad header for key ${KEY}` } });
      const e = await failure(request(f, provider), 'bad-request');
      assert.match(e.message, /bad header for key \[key\]/);
    });

    it('an unknown model is model-not-found naming the model and `agents actor show`', async (t) => {
      const f = await fake(t);
      f.push({
        error: { status: 404, code: 'model_not_found', type: 'not_found_error', message: 'model: fake-model' },
      });
      const e = await failure(request(f, provider), 'model-not-found');
      assert.match(e.message, /fake-model/);
      assert.match(e.hint, /agents actor show local\/x/);
    });

    it('retries a 429 after its Retry-After and succeeds', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      f.push(
        { error: { status: 429, type: 'rate_limit_error', message: 'slow down', headers: { 'retry-after': '1' } } },
        { text: ['after the wait'] },
      );
      const { events, error } = await collect(request(f, provider));
      assert.equal(error, undefined);
      assert.deepEqual(texts(events), ['after the wait']);
      const [a, b] = f.generations;
      assert.equal(f.generations.length, 2);
      // the wait was the endpoint's 1 s, not the 10 ms backoff (a lower bound: never flaky)
      assert.ok(b!.receivedAt - a!.receivedAt >= 950, `retried after ${b!.receivedAt - a!.receivedAt} ms`);
    });

    it('a 429 beyond the retries is rate-limit', async (t) => {
      const f = await fake(t);
      const limited = { error: { status: 429, type: 'rate_limit_error', message: 'slow down' } };
      f.push(limited, limited, limited);
      const e = await failure(request(f, provider, {}, { maxRetries: 1 }), 'rate-limit');
      assert.equal(e.status, 429);
      assert.equal(f.generations.length, 2);
    });

    it('does not wait a Retry-After longer than the step may take: rate-limit saying when to try', async (t) => {
      const f = await fake(t);
      f.push({
        error: { status: 429, type: 'rate_limit_error', message: 'quota', headers: { 'retry-after': '3600' } },
      });
      const e = await failure(request(f, provider), 'rate-limit');
      assert.match(e.hint, /try again in 3600 s/);
      assert.equal(f.generations.length, 1);
    });

    it('retries a 5xx, then fails with server', async (t) => {
      const f = await fake(t);
      const down = { error: { status: 500, type: 'server_error', message: 'boom' } };
      f.push(down, down, down, { text: ['not reached'] });
      const e = await failure(request(f, provider), 'server');
      assert.equal(e.status, 500);
      assert.match(e.message, /boom/);
      assert.equal(f.generations.length, 3, 'maxRetries defaults to 2');
    });

    it('a refused connection is network, naming the URL', async () => {
      const url = await closedPortUrl();
      const e = await failure(request({ url } as FakeLlm, provider, {}, { maxRetries: 1 }), 'network');
      assert.equal(e.message, `cannot reach ${url}: connection refused`);
      assert.match(e.hint, /is the server running\?/);
    });

    it('an endpoint that sends headers and then nothing times out', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      f.push({ hang: true });
      const e = await failure(request(f, provider, {}, { timeoutSeconds: 0.3, maxRetries: 0 }), 'timeout');
      assert.match(e.hint, /timeoutSeconds/);
    });

    it('an endpoint that stalls mid-stream times out after the chunks it sent', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      f.push({ text: ['one', 'two', 'three'], stallAfter: 1 });
      const { events, error } = await collect(request(f, provider, {}, { timeoutSeconds: 0.3 }));
      assert.deepEqual(texts(events), ['one']);
      assert.equal(error?.kind, 'timeout');
      await f.generations[0]?.closed;
      assert.equal(f.generations[0]?.aborted, true, 'the stalled request was aborted');
    });

    it('aborting mid-stream ends with cancelled and aborts the HTTP request', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      const gate = createGate();
      t.after(() => gate.release());
      f.push({ text: ['a', 'b'], gate: gate.promise });
      const ac = new AbortController();
      const events: ModelEvent[] = [];
      await assert.rejects(
        (async () => {
          for await (const e of models.stream(request(f, provider, { signal: ac.signal }))) {
            events.push(e);
            ac.abort();
          }
        })(),
        (err: unknown) => err instanceof ProviderFailure && err.kind === 'cancelled',
      );
      assert.deepEqual(texts(events), ['a']);
      const rec = f.generations[0];
      assert.ok(rec);
      await rec.closed;
      assert.equal(rec.aborted, true, 'the fake saw the client disconnect');
    });

    it('aborting during a retry wait ends at once with cancelled', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      f.push({ error: { status: 503, type: 'overloaded_error', message: 'busy', headers: { 'retry-after': '30' } } });
      const ac = new AbortController();
      const done = collect(request(f, provider, { signal: ac.signal }, { timeoutSeconds: 120 }));
      // Aborted once the 503 has been answered: the client is then in its 30 s retry wait.
      await (
        await eventually(async () => f.generations[0], 5000, 'the first request')
      ).closed;
      ac.abort();
      const { error } = await done;
      assert.equal(error?.kind, 'cancelled');
      assert.equal(f.generations.length, 1);
    });

    it('a prompt over the context window is context-window', async (t) => {
      const f = await fake(t);
      f.push(
        provider === 'anthropic'
          ? {
              error: {
                status: 400,
                type: 'invalid_request_error',
                message: 'prompt is too long: 250000 tokens > 200000 maximum',
              },
            }
          : {
              error: {
                status: 400,
                code: 'context_length_exceeded',
                type: 'invalid_request_error',
                message:
                  "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
              },
            },
      );
      const e = await failure(request(f, provider), 'context-window');
      assert.match(e.hint, /contextWindow/);
      assert.equal(f.generations.length, 1);
    });

    it('any other 4xx is bad-request with the provider message', async (t) => {
      const f = await fake(t);
      f.push({ error: { status: 422, type: 'invalid_request_error', message: 'temperature is out of range' } });
      const e = await failure(request(f, provider), 'bad-request');
      assert.match(e.message, /temperature is out of range/);
    });

    it('an error sent mid-stream fails the step after the text already streamed, without a retry', async (t) => {
      const f = await fake(t);
      f.push(
        { text: ['par', 'tial'], streamError: { type: 'overloaded_error', message: 'Overloaded' }, errorAfter: 1 },
        { text: ['not reached'] },
      );
      const { events, error } = await collect(request(f, provider));
      assert.deepEqual(texts(events), ['par']);
      assert.equal(error?.kind, 'server');
      assert.match(error?.message ?? '', /Overloaded/);
      assert.equal(f.generations.length, 1);
    });

    it('an overloaded error event before anything streamed is retried', async (t) => {
      const f = await fake(t);
      f.push({ streamError: { type: 'overloaded_error', message: 'Overloaded' } }, { text: ['second try'] });
      const { events, error } = await collect(request(f, provider));
      assert.equal(error, undefined);
      assert.deepEqual(texts(events), ['second try']);
      assert.equal(f.generations.length, 2);
    });

    it('a consumer slower than timeoutSeconds between events is not a timeout', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      f.push({ text: ['a', 'b', 'c'] });
      const events: ModelEvent[] = [];
      for await (const e of models.stream(request(f, provider, {}, { timeoutSeconds: 0.2 }))) {
        events.push(e);
        if (events.length === 1) await new Promise((r) => setTimeout(r, 400));
      }
      assert.deepEqual(texts(events), ['a', 'b', 'c']);
    });

    it('a connection cut mid-stream is network', async (t) => {
      const f = await fake(t);
      f.push({ text: ['a', 'b', 'c'], cutAfter: 2 });
      const { events, error } = await collect(request(f, provider));
      assert.deepEqual(texts(events), ['a', 'b']);
      assert.equal(error?.kind, 'network');
      assert.match(error?.message ?? '', /connection cut/);
    });

    it('an answer that ends cleanly before its finish is protocol, after the text it streamed, without a retry', async (t) => {
      const f = await fake(t);
      f.push({ text: ['a', 'b', 'c'], endAfter: 2 }, { text: ['not asked for'] });
      const { events, error } = await collect(request(f, provider));
      // the text is cut short: the step must not end as if the model had finished
      assert.deepEqual(texts(events), ['a', 'b']);
      assert.equal(events.filter((e) => e.type === 'finish').length, 0);
      assert.equal(error?.kind, 'protocol', `${error?.kind}: ${error?.message}`);
      assert.match(error.message, /ended without a finish/);
      assert.equal(f.generations.length, 1);
    });

    it('an answer that ends cleanly before its first chunk is protocol', async (t) => {
      const f = await fake(t);
      f.push({ text: ['a'], endAfter: 0 });
      const { events, error } = await collect(request(f, provider));
      assert.deepEqual(events, []);
      assert.equal(error?.kind, 'protocol', `${error?.kind}: ${error?.message}`);
    });

    it('a consumer that stops reading early aborts the HTTP request', { timeout: 15_000 }, async (t) => {
      const f = await fake(t);
      const gate = createGate();
      t.after(() => gate.release());
      f.push({ text: ['first', 'second'], gate: gate.promise });
      for await (const e of models.stream(request(f, provider))) {
        assert.deepEqual(e, { type: 'text', delta: 'first' });
        break;
      }
      const rec = f.generations[0];
      assert.ok(rec);
      await rec.closed;
      assert.equal(rec.aborted, true);
    });

    it('check(): ok when the model is listed', async (t) => {
      const f = await fake(t, { expectKey: KEY, models: ['other', 'fake-model'] });
      const r = await models.check(request(f, provider).actor, KEY, AbortSignal.timeout(5000));
      assert.deepEqual(r, { ok: true, detail: `${f.url} answers; model fake-model is listed` });
      assert.equal(f.generations.length, 0, 'no text was generated');
      assert.equal(f.requests[0]?.path, '/v1/models');
    });

    it('check(): a model missing from the list', async (t) => {
      const f = await fake(t, { models: ['a', 'b'] });
      const r = await models.check(request(f, provider).actor, KEY, AbortSignal.timeout(5000));
      assert.equal(r.ok, false);
      assert.equal(r.detail, `${f.url} answers; model fake-model is not in its list of 2 models`);
      assert.match(r.hint ?? '', /agents actor show local\/x/);
    });

    it('check(): a refused key, and an unreachable endpoint', async (t) => {
      const f = await fake(t, { expectKey: 'right' });
      const r = await models.check(request(f, provider).actor, KEY, AbortSignal.timeout(5000));
      assert.equal(r.ok, false);
      assert.match(r.detail, /refused the API key \(401\)/);
      assert.match(r.hint ?? '', /TEST_KEY/);
      assert.ok(!JSON.stringify(r).includes(KEY));
      const url = await closedPortUrl();
      const n = await models.check({ ...request(f, provider).actor, baseUrl: url }, KEY, AbortSignal.timeout(5000));
      assert.deepEqual(n, {
        ok: false,
        detail: `cannot reach ${url}: connection refused`,
        hint: 'is the server running?',
      });
    });
  });
}

describe('AiSdkLanguageModels, provider specifics', () => {
  it('retries an Anthropic 529 overloaded and succeeds', async (t) => {
    const f = await startFakeAnthropic();
    t.after(() => f.close());
    f.push({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }, { text: ['fine'] });
    const { events, error } = await collect(request(f, 'anthropic'));
    assert.equal(error, undefined);
    assert.deepEqual(texts(events), ['fine']);
    assert.equal(f.generations.length, 2);
  });

  it('an answer that is not an event stream is protocol', async (t) => {
    const server = http.createServer((_q, r) => {
      r.writeHead(200, { 'content-type': 'application/json' });
      r.end('{"hello":"world"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    await failure(request({ url } as FakeLlm, 'openai'), 'protocol');
  });

  it('openai and anthropic default to their public URLs (fetch injected: nothing leaves the machine)', async () => {
    const urls: string[] = [];
    const fetchStub: typeof fetch = async (input) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return new Response('{"error":{"message":"no"}}', {
        status: 401,
        headers: { 'content-type': 'application/json' },
      });
    };
    const m = new AiSdkLanguageModels({ fetch: fetchStub });
    const base = {
      messages: [{ role: 'user', text: 'hi' }] as ModelMessage[],
      tools: [],
      signal: AbortSignal.timeout(5000),
    };
    await failure({ ...base, actor: { name: 'local/o', provider: 'openai', model: 'gpt-x' } }, 'auth', m);
    await failure({ ...base, actor: { name: 'local/a', provider: 'anthropic', model: 'claude-x' } }, 'auth', m);
    assert.deepEqual(urls, ['https://api.openai.com/v1/chat/completions', 'https://api.anthropic.com/v1/messages']);
  });

  it('an empty fake queue is a visible 500', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    const e = await failure(request(f, 'openai', {}, { maxRetries: 0 }), 'server');
    assert.match(e.message, /fake: no scripted reply left/);
  });

  it('provider openai sends max_completion_tokens (OpenAI refuses max_tokens for its reasoning models)', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    f.push({ text: ['ok'] });
    await collect(request(f, 'openai', {}, { maxTokens: 77 }));
    const body = f.generations[0]?.body as any;
    assert.equal(body.max_completion_tokens, 77);
    assert.equal(body.max_tokens, undefined);
  });

  it('recognises the context-window wording of vLLM, llama.cpp and Ollama', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    const wordings = [
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
      'the request exceeds the available context size, try increasing it',
      'prompt too long; exceeded max context length by 12 tokens',
    ];
    for (const message of wordings) {
      f.push({ error: { status: 400, type: 'invalid_request_error', message } });
      await failure(request(f, 'openai-compatible'), 'context-window');
    }
  });

  it('the fake: reply(fn) answers from the request once the FIFO is empty; non-stream requests are refused', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    f.push({ text: ['from the FIFO'] });
    f.reply((rec) => ({ text: [`echo ${(rec.body as any).messages.at(-1).content}`], delayMs: 1 }));
    const first = await collect(request(f, 'openai'));
    assert.deepEqual(texts(first.events), ['from the FIFO']);
    const second = await collect(request(f, 'openai', { messages: [{ role: 'user', text: 'ping' }] }));
    assert.deepEqual(texts(second.events), ['echo ping']);
    const res = await fetch(`${f.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [] }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.message, 'fake: only stream: true is served');
  });

  it('loads no SDK package statically (a process without LLM actors never loads them)', async () => {
    const dir = new URL('../../../../src/infrastructure/llm/', import.meta.url);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.ts'));
    assert.ok(files.includes('ai-sdk.models.ts') && files.includes('ai-sdk.mapping.ts'), files.join(', '));
    for (const file of files) {
      const js = await readFile(new URL(file, dir), 'utf8');
      const statics = [...js.matchAll(/^import\s(?!type\s)[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
      assert.deepEqual(
        statics.filter((s) => !s?.startsWith('.') && !s?.startsWith('node:')),
        [],
        `${file} imports ${statics.join(', ')}`,
      );
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfter({ 'Retry-After': '2' }, now), 2000);
    assert.equal(retryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now), 5000);
    assert.equal(retryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, now), 250);
    assert.equal(retryAfter({ 'retry-after': 'soon' }, now), undefined);
    assert.equal(retryAfter({}, now), undefined);
  });
});
