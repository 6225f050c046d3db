import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AiSdkLanguageModels } from '../../../../src/infrastructure/index.ts';
import { MAX_CACHE_BREAKPOINTS, stableHeadEnd } from '../../../../src/infrastructure/llm/ai-sdk.mapping.ts';
import type { ModelEvent, ModelMessage, ModelRequest, ModelTool } from '../../../../src/application/index.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';
import {
  cacheBreakpoints,
  startFakeAnthropic,
  startFakeOpenAI,
  type FakeLlm,
  type FakeStreamReply,
} from '../../../support/fake-llm.ts';

const models = new AiSdkLanguageModels({ retryBaseMs: 10 });

const schema = { type: 'object', properties: { path: { type: 'string' } } };
const TOOLS: ModelTool[] = [
  { name: 'read', description: 'Reads a file', inputSchema: schema },
  { name: 'grep', description: 'Searches files', inputSchema: schema },
  { name: 'edit', description: 'Edits a file', inputSchema: schema },
];

/** Two earlier turns (one with a tool round trip), then the new question. */
const HISTORY: ModelMessage[] = [
  { role: 'user', text: 'read a' },
  { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }] },
  { role: 'tool', results: [{ id: 'c1', name: 'read', output: 'A', isError: false }] },
  { role: 'assistant', text: 'a says A' },
  { role: 'user', text: 'and b?' },
];

function request(fake: FakeLlm, provider: ActorDefinition['provider'], over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    actor: { name: 'local/x', provider, model: 'fake-model', baseUrl: fake.url, timeoutSeconds: 5 },
    system: 'You are terse.',
    messages: HISTORY,
    tools: TOOLS,
    signal: AbortSignal.timeout(20_000),
    ...over,
  };
}

async function run(req: ModelRequest): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const e of models.stream(req)) events.push(e);
  return events;
}

async function sent(fake: FakeLlm, req: ModelRequest, reply: FakeStreamReply = { text: ['ok'] }): Promise<unknown> {
  fake.push(reply);
  await run(req);
  const rec = fake.generations.at(-1);
  assert.ok(rec, 'the request reached the fake');
  return rec.body;
}

const finishOf = (events: ModelEvent[]) => {
  const f = events.at(-1);
  assert.ok(f?.type === 'finish', 'the step finished');
  return f;
};

describe('Anthropic prompt caching: the breakpoints a request carries', () => {
  const anthropic = async (t: { after: (fn: () => Promise<void>) => void }) => {
    const f = await startFakeAnthropic();
    t.after(() => f.close());
    return f;
  };

  it('marks the last tool, the system prompt and the last message of the stable head', async (t) => {
    const f = await anthropic(t);
    // Messages [0, 4) are the earlier turns, sent again unchanged next time; message 3 closes them.
    const body = (await sent(f, request(f, 'anthropic', { stableMessages: 4 }))) as any;
    const marks = cacheBreakpoints(body);
    assert.deepEqual(marks, ['tools[2]', 'system[0]', 'messages[3].content[0]']);
    assert.ok(marks.length <= MAX_CACHE_BREAKPOINTS);
    assert.deepEqual(body.messages[3].content[0], {
      type: 'text',
      text: 'a says A',
      cache_control: { type: 'ephemeral' },
    });
    assert.equal(body.messages[4].content[0].text, 'and b?');
    assert.equal(body.messages[4].content[0].cache_control, undefined, 'the new question is not cached');
  });

  it('marks only the tools and the system prompt when no stable head is given', async (t) => {
    const f = await anthropic(t);
    assert.deepEqual(cacheBreakpoints(await sent(f, request(f, 'anthropic'))), ['tools[2]', 'system[0]']);
    assert.deepEqual(cacheBreakpoints(await sent(f, request(f, 'anthropic', { stableMessages: 0 }))), [
      'tools[2]',
      'system[0]',
    ]);
  });

  it('puts the head mark on a tool result when the head ends with one', async (t) => {
    const f = await anthropic(t);
    const body = (await sent(f, request(f, 'anthropic', { stableMessages: 3 }))) as any;
    assert.deepEqual(cacheBreakpoints(body), ['tools[2]', 'system[0]', 'messages[2].content[0]']);
    assert.equal(body.messages[2].content[0].type, 'tool_result');
  });

  it('without tools or system prompt, marks only the stable head; a head past the end marks the last message', async (t) => {
    const f = await anthropic(t);
    const req = request(f, 'anthropic', { system: undefined, tools: [], stableMessages: 99 });
    const body = (await sent(f, req)) as any;
    const last = body.messages.length - 1;
    assert.deepEqual(cacheBreakpoints(body), [`messages[${last}].content[0]`]);
    assert.equal(body.messages[last].content[0].text, 'and b?');
  });

  it('never sends more breakpoints than Anthropic takes, whatever the request', async (t) => {
    const f = await anthropic(t);
    for (const stableMessages of [undefined, 0, 1, 2, 3, 4, 5, 6]) {
      const marks = cacheBreakpoints(await sent(f, request(f, 'anthropic', { stableMessages })));
      assert.ok(marks.length <= MAX_CACHE_BREAKPOINTS, `${String(stableMessages)}: ${marks.join(', ')}`);
      assert.equal(marks.length, stableMessages ? 3 : 2, `stableMessages ${String(stableMessages)}`);
    }
  });

  it('an OpenAI-compatible request carries no cache_control at all', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    const body = await sent(f, request(f, 'openai-compatible', { stableMessages: 4 }));
    assert.doesNotMatch(JSON.stringify(body), /cache_control|cacheControl/);
  });
});

describe('stableHeadEnd', () => {
  it('is the last message of the head, passing over those without content', () => {
    assert.equal(stableHeadEnd(HISTORY, 4), 3);
    assert.equal(stableHeadEnd(HISTORY, 2), 1, 'an assistant message with only a tool call has content');
    const empty: ModelMessage[] = [
      { role: 'user', text: 'q' },
      { role: 'assistant', text: '' },
    ];
    assert.equal(stableHeadEnd(empty, 2), 0, 'an empty answer cannot hold the mark: the one before does');
    assert.equal(stableHeadEnd(empty, 0), -1);
    assert.equal(stableHeadEnd([], 3), -1);
  });
});

describe('cache usage in a step’s finish', () => {
  it('Anthropic: cache reads and writes from message_start, inputTokens still every input token', async (t) => {
    const f = await startFakeAnthropic();
    t.after(() => f.close());
    f.push({ text: ['ok'], usage: { input: 1000, output: 7, cacheRead: 800, cacheWrite: 150 } });
    const finish = finishOf(await run(request(f, 'anthropic', { stableMessages: 4 })));
    assert.deepEqual(finish.usage, { inputTokens: 1000, outputTokens: 7, cacheReadTokens: 800, cacheWriteTokens: 150 });
  });

  it('OpenAI-compatible: prompt_tokens_details.cached_tokens is the cache reads', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    f.push({ text: ['ok'], usage: { input: 1000, output: 7, cacheRead: 640 } });
    const finish = finishOf(await run(request(f, 'openai-compatible')));
    assert.deepEqual(finish.usage, { inputTokens: 1000, outputTokens: 7, cacheReadTokens: 640 });
  });

  it('OpenAI-compatible: an endpoint that reports no cached tokens gets no cache fields', async (t) => {
    const f = await startFakeOpenAI();
    t.after(() => f.close());
    f.push({ text: ['ok'], usage: { input: 1000, output: 7 } });
    const finish = finishOf(await run(request(f, 'openai-compatible')));
    assert.deepEqual(finish.usage, { inputTokens: 1000, outputTokens: 7 });
  });
});
